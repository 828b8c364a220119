"""Fixtures of the outer-stage functional tests (retry, virtual_host,
create_request): content, views and raw WSGI stages, wired by site.zcml.

``plan`` says how the views and stages fail on the next requests and
``seen`` collects what they observed; ``reset`` empties both.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))

#: What the next requests should do: fail this many attempts with this error.
plan = {'failures': 0, 'error': 'conflict'}

#: What the views and probe stages observed, one dict per call.
seen = []


def reset():
    plan.clear()
    plan.update(failures=0, error='conflict')
    del seen[:]


def site_zcml(directory):
    """Write a site ZCML that includes this package's site.zcml; return it.

    Including by package keeps the dotted names in site.zcml relative, so
    they work whatever name pytest gives this package.
    """
    path = os.path.join(str(directory), 'outer-site.zcml')
    with open(path, 'w') as handle:
        handle.write('<configure xmlns="http://namespaces.zope.org/zope">\n'
                     '  <include package="%s" file="site.zcml" />\n'
                     '</configure>\n' % __name__)
    return path


def populate_setting():
    """The ``open_root.populate`` value that adds this package's content."""
    return __name__ + '.content.populate'


def settings(**values):
    """Stage settings from ``stage__key=value`` keywords, over the defaults
    of these tests (no backoff delay; the content of ``content.populate``)."""
    result = {'retry': {'backoff': '0'},
              'open_root': {'populate': populate_setting()}}
    for name, value in values.items():
        stage, _, key = name.partition('__')
        result.setdefault(stage, {})[key] = value
    return result


#: A site whose only request type handles GET.
BROWSER_ONLY_ZCML = os.path.join(HERE, 'browser-only.zcml')
