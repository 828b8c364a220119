"""Every request of the hostile corpus gets its expected status, never a
500, and no page shows a traceback, a server path or unescaped markup."""

import tracemalloc

import pytest

from tests.conftest import ROOT
from tests.security.corpus import CORPUS
from tests.security.corpus import FAULTS
from tests.security.corpus import billion_laughs

#: What a response body must never contain: traceback text, paths of the
#: server's files, markup echoed unescaped, a file read through XML.
LEAKS = (b'Traceback', b'File "', ROOT.encode(), b'/work/',
         b'site-packages', b'<script>', b'root:x:0:0')


def leaks_in(body):
    return [leak for leak in LEAKS if leak in body]


def send(site, case):
    return site.request(case.method, case.path, case.query, case.body,
                        case.headers, case.content_length, case.terminated)


def test_the_corpus_has_at_least_100_distinct_cases():
    assert len(CORPUS) >= 100
    assert len({case.id for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize('case', CORPUS, ids=[case.id for case in CORPUS])
def test_hostile_request_gets_its_status_and_leaks_nothing(
        shared_site, case):
    response = send(shared_site, case)
    assert response.status_int == case.status, response.text[:300]
    assert response.status_int < 500
    assert leaks_in(response.body) == []
    if case.id in FAULTS:
        assert b'<fault>' in response.body


def test_billion_laughs_is_a_fault_without_expanding_the_entities(
        shared_site):
    tracemalloc.start()
    try:
        response = shared_site.request(
            'POST', '/', body=billion_laughs(),
            headers={'CONTENT_TYPE': 'text/xml'})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_int == 200
    assert b'<fault>' in response.body
    assert b'lollollol' not in response.body
    # expanded, the method name alone would take 3 GB; expat stops
    # amplification at a few MB
    assert peak < 256 * 1024 * 1024
