"""What the daemon user plants in the database to make root run its code:
an object whose unpickling calls ``record_uid`` (a global reference in
a pickle, as any function of the Python path could be), which writes the
uid that unpickled it to a file in a directory."""

import os
import secrets


def record_uid(directory):
    """Write the real and effective uid of this process to a new file in
    ``directory``; return None (the attribute the pickle sets)."""
    path = os.path.join(directory, secrets.token_hex(8))
    with open(path, 'x') as stream:
        stream.write('%d %d' % (os.getuid(), os.geteuid()))


def recorded_uids(directory):
    """Every uid that unpickled the payload (real and effective)."""
    uids = set()
    for name in os.listdir(directory):
        with open(os.path.join(directory, name)) as stream:
            uids.update(int(uid) for uid in stream.read().split())
    return uids


class Payload:
    """Pickled as a call of ``record_uid(directory)``."""

    def __init__(self, directory):
        self.directory = directory

    def __reduce__(self):
        return record_uid, (self.directory,)
