"""What pyproject.toml cannot say: the long description, README.md up to
its part for people working on zope.pipeline itself (which links into the
repository, links that would break on an index page)."""

import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, 'README.md')
#: README.md from this line on is for a clone of the repository.
END_OF_DESCRIPTION = '<!-- The long description (setup.py) ends here. -->'


def long_description(path=README):
    """README.md up to END_OF_DESCRIPTION."""
    with open(path, encoding='utf-8') as readme:
        text = readme.read()
    description, found, _ = text.partition(END_OF_DESCRIPTION)
    if not found:
        raise SystemExit('%s has no line %r: the long description would be '
                         'all of it.' % (path, END_OF_DESCRIPTION))
    return description.rstrip() + '\n'


if __name__ == '__main__':
    setup(long_description=long_description(),
          long_description_content_type='text/markdown')
