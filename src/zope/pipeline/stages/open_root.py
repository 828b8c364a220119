"""open_root: a ZODB connection for the request, with its own transaction
manager, from the database of this process.

The connection goes back to the pool as soon as the body is complete: at
once for a body that is already a list, at ``close()`` for a streamed one,
so what the stream reads stays valid until the server is done with it.

While the rest of the pipeline runs, the request's transaction manager is
also the thread's (``transaction.manager``), so code written for the
classic publisher (``transaction.get().note(...)``, ``transaction.doom()``,
data managers joining ``transaction.get()``) works on this request's
transaction; code that commits, aborts or begins a transaction itself goes
on in a new one, as it did with the classic publisher
(``zope.pipeline.publishing.scene.RequestTransactionManager``).

The database is named by a ZConfig file (``zodb_config``), or, for Python
callers that have opened one already (a test layer's ``DemoStorage``
database), given as ``database``: an open ``ZODB.DB``, used as it is (no
bootstrap, never closed by the pipeline), or a callable returning the
open ``ZODB.DB`` each request uses (``zope.pipeline.testing``'s
application, whose test layers give each test a database of its own).

When a ``response_cache`` stage of the publisher is on (built before
this stage, it sets ``responsecache.RECORDING`` in the build's
``shared``), the database opens ``responsecache.RecordingConnection``s,
which note what each page loads; otherwise its connections are ZODB's
plain ``Connection``.

When the database cannot be opened (its MySQL server is down when the
process first needs it), the error passes up to the retry stage, which
answers 503 with Retry-After (``errors.is_unavailable``); the next request
tries to open it again.  A connection whose MySQL connection was lost goes
back to the pool as usual: RelStorage reconnects it when its next
transaction begins.
"""

import functools

from ZODB.Connection import Connection
from zope.interface import Interface
from zope.schema import Field
from zope.schema import TextLine

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.wsgi import ClosingIterator
from zope.pipeline.publishing.scene import RequestTransactionManager
from zope.pipeline.publishing.scene import bind_to_thread
from zope.pipeline.zodb.responsecache import DATABASE_SOURCE
from zope.pipeline.zodb.responsecache import RECORDING
from zope.pipeline.zodb.responsecache import install
from zope.pipeline.zodb.storage import create_root_folder
from zope.pipeline.zodb.storage import database_for
from zope.pipeline.zodb.storage import resolve_callable


class DatabaseField(Field):
    """An open ``ZODB.DB``, or a callable returning one: given by Python
    callers, never by an ini."""

    def fromUnicode(self, text):
        raise ValueError('an open ZODB.DB is given from Python '
                         '(make_publisher_for_loaded_site), not as text; '
                         'an ini names a ZConfig file with '
                         'open_root.zodb_config')


class OpenDatabase:
    """A database opened by the caller, in the shape of ProcessDatabase."""

    __slots__ = ('db',)

    def __init__(self, db):
        self.db = db

    def get(self):
        return self.db

    def record(self):
        install(self.db)


class ChosenDatabase:
    """A database the caller chooses for each request, in the shape of
    ProcessDatabase: ``choose()`` returns it."""

    __slots__ = ('choose', 'recording')

    def __init__(self, choose):
        self.choose = choose
        self.recording = False

    def get(self):
        db = self.choose()
        if self.recording and db.klass is Connection:   # a new one
            install(db)
        return db

    def record(self):
        self.recording = True


def given_database(database):
    """The database source of a ``database`` setting: a callable chooses
    the database of each request; anything else is the open database."""
    if callable(database):
        return ChosenDatabase(database)
    return OpenDatabase(database)


class IOpenRootSettings(Interface):

    zodb_config = TextLine(
        title="ZConfig file describing the database ('' for a database in "
              "memory, for tests)", default='', required=False)
    database = DatabaseField(
        title='An open ZODB.DB, or a callable returning the one each '
              'request uses, instead of zodb_config (Python callers only)',
        default=None, required=False)
    root_name = TextLine(title='Name of the root application in the ZODB '
                               'root mapping', default='Application')
    root_factory = TextLine(
        title='Dotted name of a callable making the root application when '
              'the database has none',
        default='zope.pipeline.zodb.storage.create_root_folder')
    populate = TextLine(
        title='Dotted name of a callable(root) that adds initial content to '
              'a new root application', default='', required=False)


def release(connection, manager):
    """Abort anything left open and return the connection to the pool."""
    try:
        manager.abort()
    finally:
        connection.close()


def root_of(connection, root_name):
    return connection.root()[root_name]


class OpenRootStage:
    """One connection, one transaction manager per request."""

    settings_schema = IOpenRootSettings
    contract = Contract(
        writes=(keys.CONNECTION, keys.TRANSACTION_MANAGER, keys.ROOT,
                keys.ROOT_NAME))

    def __init__(self, next_app, zodb_config='', root_name='Application',
                 root_factory='zope.pipeline.zodb.storage.create_root_folder',
                 populate='', database=None, build=None):
        self.next_app = next_app
        self.root_name = root_name
        if database is not None:
            self.database = given_database(database)
        else:
            self.database = database_for(
                zodb_config, root_name,
                resolve_callable(root_factory, 'open_root.root_factory')
                or create_root_folder,
                resolve_callable(populate, 'open_root.populate'))
        if build is not None and build.shared.get(RECORDING):
            # a response cache is on: its connections record what they
            # load (else they are ZODB's plain Connection)
            self.database.record()
            if not isinstance(self.database, ChosenDatabase):
                # response_cache_hit (outer) polls it for this request type
                build.shared.setdefault(DATABASE_SOURCE, {})[
                    build.request_type] = self.database

    def __call__(self, environ, start_response):
        manager = RequestTransactionManager()
        connection = self.database.get().open(transaction_manager=manager)
        environ[keys.CONNECTION] = connection
        environ[keys.TRANSACTION_MANAGER] = manager
        environ[keys.ROOT_NAME] = self.root_name
        environ[keys.ROOT] = functools.partial(root_of, connection,
                                               self.root_name)
        previous = bind_to_thread(manager)
        try:
            result = self.next_app(environ, start_response)
        except BaseException:
            release(connection, manager)
            raise
        finally:
            bind_to_thread(previous)
        if type(result) is list:
            release(connection, manager)
            return result
        return ClosingIterator(result,
                               functools.partial(release, connection, manager))
