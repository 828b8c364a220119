"""One contender of the bootstrap race: ``python -m
tests.integration.race_worker ZCONFIG START_AT`` waits until the time
START_AT (seconds since the epoch), opens the database as a server process
does (and so bootstraps the sample site), then prints what it did and saw
as JSON."""

import json
import sys
import time


def main(config_path, start_at):
    from zope.pipeline.sample.content import populate
    from zope.pipeline.zodb import storage
    database = storage.database_for(config_path, populate=populate)
    while time.time() < start_at:
        time.sleep(0.001)
    connection = database.get().open()
    try:
        application = connection.root()['Application']
        seen = {'created': database.created_root,
                'oid': application._p_oid.hex(),
                'items': len(application['folder']['page'])}
    finally:
        connection.close()
        storage.close_all()
    print(json.dumps(seen))


if __name__ == '__main__':
    main(sys.argv[1], float(sys.argv[2]))
