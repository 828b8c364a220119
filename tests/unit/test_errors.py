"""errors.for_caller: what a caller that asked for exceptions gets."""

from zope.pipeline.http.errors import MissingArgument
from zope.pipeline.http.errors import TooManyArguments
from zope.pipeline.http.errors import for_caller


def raised_from(error, cause):
    try:
        raise error from cause
    except Exception as caught:
        return caught


def test_arguments_that_do_not_fit_reach_the_caller_as_the_type_error():
    cause = TypeError('Missing argument to view(): name')
    error = raised_from(MissingArgument(str(cause)), cause)
    assert for_caller(error) is cause
    cause = TypeError('view() takes at most 1 argument (2 given)')
    assert for_caller(raised_from(TooManyArguments('x'), cause)) is cause


def test_other_errors_reach_the_caller_as_they_are():
    error = raised_from(MissingArgument('no cause'), None)
    assert for_caller(error) is error
    other = raised_from(ValueError('bad'), TypeError('cause'))
    assert for_caller(other) is other
