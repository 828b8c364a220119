"""Browser views of the outer-stage tests; each records what it saw."""

import hashlib
import json

import transaction
from zope.security.proxy import removeSecurityProxy
from zope.traversing.browser import absoluteURL

from zope.pipeline.environ import CLIENT_ADDRESS

from . import plan
from . import seen
from .failures import fail_if_planned

#: Headers only a trusted proxy may set; the views report which survived.
FORWARDED_KEYS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_HOST',
                  'HTTP_X_FORWARDED_PROTO', 'HTTP_X_FORWARDED_PORT',
                  'HTTP_X_FORWARDED_FOR', 'HTTP_X_VHM_HOST',
                  'HTTP_X_VHM_ROOT')


class View:

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def attempt(self):
        return self.request.environment['zope.pipeline.attempt']

    def json(self, data):
        self.request.response.setHeader('Content-Type', 'application/json')
        return json.dumps(data, sort_keys=True)


class AttemptView(View):
    """Set a header and a cookie, record the body and form, fail on plan."""

    def __call__(self):
        attempt = self.attempt()
        response = self.request.response
        response.setHeader('X-Attempt', str(attempt))
        response.setCookie('attempt', str(attempt))
        body = self.request.bodyStream.getCacheStream().read()
        seen.append({
            'view': 'attempt', 'attempt': attempt,
            'retries_left':
                self.request.environment['zope.pipeline.retries_left'],
            'form': dict(self.request.form),
            'body_sha256': hashlib.sha256(body).hexdigest(),
            'body_length': len(body)})
        fail_if_planned(attempt)
        return 'attempt %d' % attempt


class UrlsView(View):
    """The URLs zope.publisher and zope.traversing generate here."""

    def __call__(self):
        environ = self.request._environ
        return self.json({
            'url': self.request.getURL(),
            'context_url': absoluteURL(self.context, self.request),
            'application_url': self.request.getApplicationURL(),
            'client_address': environ.get(CLIENT_ADDRESS),
            'forwarded_keys': sorted(key for key in FORWARDED_KEYS
                                     if key in environ)})


class RedirectView(View):
    """Redirect (untrusted, as views normally do) to the urls view."""

    def __call__(self):
        self.request.response.redirect(
            absoluteURL(self.context, self.request) + '/@@urls')
        return ''


class BumpView(View):
    """Add one to a counter on the context; on the planned attempts another
    connection changes the same object first, so the commit conflicts."""

    def __call__(self):
        context = removeSecurityProxy(self.context)
        attempt = self.attempt()
        seen.append({'view': 'bump', 'attempt': attempt})
        current = getattr(context, 'counter', 0)
        if attempt <= plan['failures']:
            commit_elsewhere(context)
        context.counter = current + 1
        return str(context.counter)


def commit_elsewhere(ob):
    """Add 100 to ``ob.counter`` through a second connection and commit."""
    manager = transaction.TransactionManager(explicit=True)
    connection = ob._p_jar.db().open(transaction_manager=manager)
    try:
        manager.begin()
        other = connection.get(ob._p_oid)
        other.counter = getattr(other, 'counter', 0) + 100
        manager.commit()
    finally:
        connection.close()
