"""process_inputs skips zope.publisher's ``processInputs`` only where it
would read nothing: a GET or HEAD of a BrowserRequest whose query string
is present and empty."""


from zope.component import provideAdapter
from zope.i18n.interfaces import IUserPreferredCharsets
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPCharsets
from zope.publisher.interfaces.http import IHTTPRequest

from zope.pipeline.stages.process_inputs import nothing_to_process
from zope.pipeline.stages.process_inputs import process_form

from .environs import minimal_environ


def request_for(values, request_class=BrowserRequest):
    return request_class(values['wsgi.input'], values)


class CountingRequest(BrowserRequest):
    """A request class with a processInputs of its own."""

    calls = 0

    def processInputs(self):
        self.calls += 1
        super().processInputs()


def test_get_with_an_empty_query_string_has_nothing_to_process():
    values = minimal_environ(QUERY_STRING='')
    request = request_for(values)
    assert nothing_to_process(request)
    process_form(values, request)
    assert request.form == {}
    assert request.environment['QUERY_STRING'] == ''


def test_get_without_a_query_string_key_is_processed_and_gets_one():
    values = minimal_environ()
    request = request_for(values)
    assert not nothing_to_process(request)
    process_form(values, request)
    assert request.environment['QUERY_STRING'] == ''


def test_get_with_a_query_string_is_processed(clean_zope):
    provideAdapter(HTTPCharsets, (IHTTPRequest,), IUserPreferredCharsets)
    values = minimal_environ(QUERY_STRING='n:int=3')
    request = request_for(values)
    assert not nothing_to_process(request)
    process_form(values, request)
    assert request.form == {'n': 3}


def test_request_class_with_its_own_process_inputs_is_always_called():
    values = minimal_environ(method='HEAD', QUERY_STRING='')
    request = request_for(values, CountingRequest)
    assert not nothing_to_process(request)
    process_form(values, request)
    assert request.calls == 1
