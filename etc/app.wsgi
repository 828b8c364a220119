"""The WSGI script a system Apache points at (etc/apache/zope-pipeline.conf).

mod_wsgi imports it once in each daemon process, at the process's start
(WSGIImportScript) and after the fork, so each process loads the site and
opens its own database; the threads of the process (WSGIDaemonProcess
threads=) are checked against the ZODB pool size first, and a process that
has more threads than connections refuses to start, saying so in Apache's
error log.

Environment of the Apache processes (e.g. /etc/apache2/envvars):

ZOPE_PIPELINE_INI
    the paste.deploy ini to serve (default: deploy.ini beside this script);
ZOPE_PIPELINE_SITE_PATH
    the path of an object to publish at the root URL instead of the root
    application (e.g. /folder): requests are rewritten through ``++vh++``,
    so the URLs the site makes start at the root URL.

Touching this file restarts the daemon processes gracefully (mod_wsgi
reloads a daemon process whose WSGI script changed).
"""

import os

from zope.pipeline.commands.serve import SiteAtRoot
from zope.pipeline.commands.serve import wsgi_application

HERE = os.path.dirname(os.path.abspath(__file__))
INI = os.environ.get('ZOPE_PIPELINE_INI') or os.path.join(HERE, 'deploy.ini')
SITE_PATH = os.environ.get('ZOPE_PIPELINE_SITE_PATH', '')

application = wsgi_application(INI)
if SITE_PATH.strip('/'):
    application = SiteAtRoot(application, SITE_PATH)
