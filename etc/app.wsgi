"""The WSGI script a system Apache points at (etc/apache/zope-pipeline.conf).

mod_wsgi imports it once in each daemon process, at the process's start
(WSGIImportScript) and after the fork, so each process loads the site and
opens its own database (``zope.pipeline.serving.startup.load_site``,
which never raises: what stops the site is logged once, saying what to change, and
requests are answered 503 meanwhile).  The threads of the process
(WSGIDaemonProcess threads=) are checked against the ZODB pool size, and
known passwords refused (the listening address is not known here, so it
counts as reachable from the network: see docs/security.md).

Environment of the Apache processes (e.g. /etc/apache2/envvars):

ZOPE_PIPELINE_INI
    the paste.deploy ini to serve, e.g. /srv/zope-pipeline/etc/
    deploy-mysql.ini (required: without it every request is answered 503
    and the error log says so; the development deploy.ini is never
    served by default);
ZOPE_PIPELINE_SITE_PATH
    the path of an object to publish at the root URL instead of the root
    application (e.g. /folder): requests are rewritten through ``++vh++``,
    so the URLs the site makes start at the root URL;
ZOPE_PIPELINE_RUN_DIR
    a directory private to the daemon processes' user for their run-time
    state (default: var/run beside etc/).

Touching this file (or `zope-pipeline restart INI --pid-file
/run/apache2/apache2.pid --run-dir var/run`) restarts the daemon
processes one at a time, each after its successor has loaded the site
(zope.pipeline.serving.rolling; etc/apache/zope-pipeline.conf turns
mod_wsgi's own reload, every process at once under load, off).
"""

import os

from zope.pipeline.serving.rolling import watch_script
from zope.pipeline.serving.startup import SiteAtRoot
from zope.pipeline.serving.startup import load_site
from zope.pipeline.serving.startup import refuse

# What the daemon processes create (the database, caches, compiled
# templates) is their user's only.
os.umask(0o077)

HERE = os.path.dirname(os.path.abspath(__file__))
INI = os.environ.get('ZOPE_PIPELINE_INI', '').strip()
SITE_PATH = os.environ.get('ZOPE_PIPELINE_SITE_PATH', '')
os.environ.setdefault('ZOPE_PIPELINE_RUN_DIR',
                      os.path.join(os.path.dirname(HERE), 'var', 'run'))

if not INI:
    application = refuse(
        'ZOPE_PIPELINE_INI is not set: name the ini to serve in Apache\'s '
        'environment (e.g. `export ZOPE_PIPELINE_INI=%s` in '
        '/etc/apache2/envvars), then restart Apache.'
        % os.path.join(HERE, 'deploy-mysql.ini'))
else:
    application = load_site(INI)
    watch_script(__file__)
    if SITE_PATH.strip('/'):
        application = SiteAtRoot(application, SITE_PATH)
