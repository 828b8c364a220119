"""Content of the sample site, and ``populate``, which fills a new site.

Comments live in a BTree of their page, keyed newest first, with a
``BTrees.Length`` beside it: two comments posted at once touch different
keys and a shared counter whose conflicts resolve, so they rarely conflict,
and reading a page never loads more than its newest comments.
"""

import os
import time
import uuid

from BTrees.Length import Length
from BTrees.OOBTree import OOBTree
from persistent import Persistent
from zope.container.btree import BTreeContainer
from zope.container.contained import Contained
from zope.interface import implementer
from zope.site.folder import Folder

from zope.pipeline.sample.interfaces import IComment
from zope.pipeline.sample.interfaces import ICommentable
from zope.pipeline.sample.interfaces import ICounter
from zope.pipeline.sample.interfaces import IIncrement
from zope.pipeline.sample.interfaces import IItem
from zope.pipeline.sample.interfaces import IPage
from zope.pipeline.sample.interfaces import InvalidComment
from zope.pipeline.sample.interfaces import ISampleFolder

#: How many items /folder/page lists.
ITEMS = 10

#: Longest accepted comment author and text (``IComment``'s limits).
MAX_AUTHOR = IComment['author'].max_length
MAX_TEXT = IComment['text'].max_length
#: What a refused comment is told.
COMMENT_LIMITS = ('A comment needs a text of at most %d characters and an '
                  'author of at most %d.' % (MAX_TEXT, MAX_AUTHOR))

#: Comment keys sort newest first: this minus the time in nanoseconds.
_KEY_EPOCH = 10 ** 19


@implementer(ISampleFolder)
class SampleFolder(Folder):
    """A folder with a title."""

    def __init__(self, title=''):
        super().__init__()
        self.title = title


@implementer(IPage, ICommentable)
class Page(BTreeContainer):
    """A page listing its items, with comments."""

    def __init__(self, title='', body=''):
        super().__init__()
        self.title = title
        self.body = body
        self.comments = OOBTree()
        self.comments_length = Length()

    def add_comment(self, author, text):
        author, text = valid_comment(author, text)
        key = '%019d-%d-%s' % (_KEY_EPOCH - time.time_ns(), os.getpid(),
                               uuid.uuid4().hex[:8])
        self.comments[key] = (author, text, time.time())
        self.comments_length.change(1)
        return key

    def recent_comments(self, count=10):
        comments = []
        for author, text, when in self.comments.values():
            if len(comments) >= count:
                break
            comments.append({'author': author, 'text': text, 'when': when})
        return comments

    def comment_count(self):
        return self.comments_length()


def valid_comment(author, text):
    """Return ``(author, text)`` stripped, the author defaulting to
    'anonymous'; raise InvalidComment unless both are text within the
    limits of ``IComment``."""
    if not isinstance(author, str) or not isinstance(text, str):
        raise InvalidComment(COMMENT_LIMITS)
    author, text = author.strip() or 'anonymous', text.strip()
    if not (0 < len(text) <= MAX_TEXT and len(author) <= MAX_AUTHOR):
        raise InvalidComment(COMMENT_LIMITS)
    return author, text


@implementer(IItem)
class Item(Contained, Persistent):
    """An item of a page."""

    def __init__(self, title='', body=''):
        self.title = title
        self.body = body


@implementer(ICounter, IIncrement)
class Counter(Contained, Persistent):
    """A number that increments (and conflicts when incremented at once)."""

    value = 0

    def increment(self):
        self.value += 1
        return self.value


def populate(root):
    """Fill a new root application (``open_root.populate``).

    ``/folder/page`` lists ten items; ``/folder/about`` is a second page;
    ``/counter`` is the counter.
    """
    folder = root['folder'] = SampleFolder('A folder of pages')
    page = folder['page'] = Page(
        'A page with %d items' % ITEMS,
        'This page lists its items; anyone may comment on it.')
    for number in range(1, ITEMS + 1):
        page['item-%02d' % number] = Item(
            'Item number %d' % number,
            'The body of item number %d.' % number)
    folder['about'] = Page(
        'About the sample site',
        'zope.pipeline publishes this site: the Zope publisher as an '
        'explicit WSGI pipeline.')
    root['counter'] = Counter()
