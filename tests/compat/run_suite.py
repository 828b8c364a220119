"""Run one installed package's shipped test suite, unchanged, with
zope.testrunner, through the classic publisher or through zope.pipeline.

Used by test_compat.py in a subprocess:
``python run_suite.py --test-path SITE_PACKAGES -s PACKAGE -vv``, with
``COMPAT_MODE`` = ``classic`` or ``pipeline`` and ``COMPAT_REQUESTS`` the
file that each process (zope.testrunner may start sub-processes for
layers, which run this script again) appends its count of served requests
to.  In ``pipeline`` mode every ``zope.app.wsgi.testlayer.BrowserLayer``
publishes through ``zope.pipeline.testing.PipelineApplication``, with the
stage settings of ``COMPAT_SETTINGS`` (JSON) if given.
"""

import atexit
import json
import os
import sys

served = [0]


class Counted:
    """A WSGI application that counts the requests it serves; its other
    attributes are the application's (layers reach into the classic
    application's ``requestFactory`` and ``handleErrors``, and replace
    them)."""

    def __init__(self, app):
        object.__setattr__(self, 'app', app)

    def __call__(self, environ, start_response):
        served[0] += 1
        return self.app(environ, start_response)

    def __getattr__(self, name):
        return getattr(self.app, name)

    def __setattr__(self, name, value):
        setattr(self.app, name, value)


def counting(application_class, settings=None):
    """Wrap ``application_class(db, ...)`` so its apps count requests
    (and, for zope.pipeline, get the stage ``settings``)."""
    def make(*args, **kwargs):
        if settings:
            kwargs['settings'] = settings
        return Counted(application_class(*args, **kwargs))
    return make


def write_count():
    path = os.environ.get('COMPAT_REQUESTS')
    if path:
        with open(path, 'a') as stream:
            stream.write('%d\n' % served[0])


def main():
    from zope.app.wsgi import testlayer
    settings = None
    if os.environ.get('COMPAT_MODE') == 'pipeline':
        from zope.pipeline.testing import use_pipeline_in_classic_layers
        use_pipeline_in_classic_layers()
        settings = json.loads(os.environ.get('COMPAT_SETTINGS') or 'null')
    testlayer.WSGIPublisherApplication = counting(
        testlayer.WSGIPublisherApplication, settings)
    atexit.register(write_count)
    import zope.testrunner
    zope.testrunner.run([], sys.argv)


if __name__ == '__main__':
    main()
