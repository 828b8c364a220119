"""The README's "How a request flows" lists the standard chains: its
numbered list (the outer chain) and its table (the inner chain of each
request type) are compared with the chains the standard configuration
compiles, so the README cannot drift from the code."""

import os
import re

import pytest

from .engine_files import ROOT

README = os.path.join(ROOT, 'README.md')
REQUEST_TYPES = ('browser', 'xmlrpc', 'http')


def flow_section():
    with open(README) as readme:
        text = readme.read()
    start = text.index('## How a request flows')
    return text[start:text.index('\n## ', start + 1)]


def readme_outer_chain():
    """The names of the numbered list (``1. `metrics`: ...``)."""
    return re.findall(r'^\d+\. `(\w+)`', flow_section(), re.M)


def readme_inner_chains():
    """{request type: names}, from the table's yes/- columns."""
    rows = [[cell.strip() for cell in line.strip('|').split('|')]
            for line in flow_section().splitlines()
            if line.startswith('| `')]
    header = next(line for line in flow_section().splitlines()
                  if line.startswith('| stage'))
    columns = [cell.strip() for cell in header.strip('|').split('|')]
    chains = {}
    for request_type in REQUEST_TYPES:
        column = columns.index(request_type)
        chains[request_type] = [row[0].strip('`') for row in rows
                                if row[column] == 'yes']
    return chains


@pytest.fixture
def publisher(clean_zope):
    from zope.pipeline.app import make_app
    return make_app()


def test_the_readme_lists_the_outer_chain(publisher):
    assert readme_outer_chain() == publisher.outer.names()


@pytest.mark.parametrize('request_type', REQUEST_TYPES)
def test_the_readme_table_lists_the_inner_chain(publisher, request_type):
    _registration, spec = publisher.request_types[request_type]
    assert readme_inner_chains()[request_type] == (
        publisher.chain_for(spec).names())


def test_the_readme_table_has_every_request_type(publisher):
    assert sorted(publisher.request_types) == sorted(REQUEST_TYPES)
