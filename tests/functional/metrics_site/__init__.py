"""The site of the metrics functional and browser tests: the standard
pipeline, a few views on the root folder and an administrator allowed to
see ``metrics.html`` (site.zcml, beside this file)."""

import base64
import os


def site_zcml(directory, *extra):
    """Write a site ZCML including this package's site.zcml (so its dotted
    names stay relative, whatever name pytest gives this package)."""
    path = os.path.join(str(directory), 'metrics-site.zcml')
    with open(path, 'w') as handle:
        handle.write('<configure xmlns="http://namespaces.zope.org/zope">\n'
                     '  <include package="%s" file="site.zcml" />\n%s\n'
                     '</configure>\n' % (__name__, '\n'.join(extra)))
    return path


def basic_auth(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode('utf-8'))
    return {'Authorization': 'Basic ' + token.decode('ascii')}
