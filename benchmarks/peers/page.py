"""The page every peer serves, and how a response is checked against it.

The root holds ``folder``, which holds ``page``, a container of ten
persistent items titled ``Item 00`` ... ``Item 09``; ``GET /folder/page``
renders a template that prints the page's title in ``<title>`` and
``<h1>`` and one ``<li>`` per item title.  ``expected_body()`` is that page
as every peer's template writes it (and the bytes the ceiling serves).
"""

import re

PAGE_PATH = '/folder/page'
FOLDER_NAME = 'folder'
PAGE_NAME = 'page'
PAGE_TITLE = 'A page of 10 items'
ITEM_COUNT = 10
ITEMS = [('item-%02d' % number, 'Item %02d' % number)
         for number in range(ITEM_COUNT)]

_TEMPLATE = '''\
<!DOCTYPE html>
<html>
  <head><title>%(title)s</title></head>
  <body>
    <h1>%(title)s</h1>
    <ul>
%(items)s
    </ul>
  </body>
</html>
'''


def expected_body():
    """The page's bytes, as the peers' templates render it."""
    items = '\n'.join('      <li>%s</li>' % title for name, title in ITEMS)
    return (_TEMPLATE % {'title': PAGE_TITLE, 'items': items}).encode()


def page_problems(body):
    """What a response body lacks of the page: [] when it has the title in
    ``<title>`` and ``<h1>`` and the ten item titles in order."""
    text = body.decode('utf-8', 'replace')
    problems = []
    for tag in ('title', 'h1'):
        found = re.findall(r'<%s>\s*(.*?)\s*</%s>' % (tag, tag), text, re.S)
        if found != [PAGE_TITLE]:
            problems.append('<%s> holds %r, not %r' % (tag, found,
                                                       PAGE_TITLE))
    titles = re.findall(r'<li>\s*(.*?)\s*</li>', text, re.S)
    expected = [title for name, title in ITEMS]
    if titles != expected:
        problems.append('the items are %r, not %r' % (titles, expected))
    return problems
