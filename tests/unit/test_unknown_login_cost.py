"""An unknown login costs one bcrypt check, whichever authentication
utility knows the logins: here zope.pluggableauth's principal folder
(what a local site's authentication utility holds), which checks a
password with the named password manager only for a login it knows."""

import base64

import pytest
from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import ILoginPassword
from zope.component import provideAdapter
from zope.component import provideUtility
from zope.interface import implementer
from zope.password.interfaces import IPasswordManager
from zope.pluggableauth.plugins.principalfolder import InternalPrincipal
from zope.pluggableauth.plugins.principalfolder import PrincipalFolder
from zope.publisher.browser import TestRequest as StockTestRequest

from zope.pipeline import environ as keys
from zope.pipeline.security.passwords import RememberingBCRYPTPasswordManager
from zope.pipeline.security.passwords import VerifiedCredentials
from zope.pipeline.stages.authenticate import AuthenticateStage
from zope.pipeline.stages.authenticate import BasicAuthCredentials


class Principal:
    def __init__(self, id):
        self.id = id


@implementer(IAuthentication)
class FolderAuthentication:
    """Authenticate HTTP Basic credentials with a principal folder."""

    def __init__(self, folder):
        self.folder = folder

    def authenticate(self, request):
        credentials = ILoginPassword(request)
        if credentials.getLogin() is None:
            return None
        info = self.folder.authenticateCredentials({
            'login': credentials.getLogin().decode(),
            'password': credentials.getPassword().decode()})
        return Principal(info.id) if info is not None else None

    def unauthenticatedPrincipal(self):
        return None


def ok(environ, start_response):
    start_response('200 OK', [])
    return [b'ok']


@pytest.fixture
def stage(clean_zope, monkeypatch):
    provideAdapter(BasicAuthCredentials)
    provideUtility(RememberingBCRYPTPasswordManager(VerifiedCredentials()),
                   IPasswordManager, 'BCRYPT')
    folder = PrincipalFolder('local.')
    folder['known'] = InternalPrincipal('known', 'the-password', 'Known',
                                        passwordManagerName='BCRYPT')
    provideUtility(FolderAuthentication(folder), IAuthentication)
    return AuthenticateStage(ok)


def login(stage, login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    environ = {'HTTP_AUTHORIZATION': 'Basic ' + token.decode(),
               'REMOTE_ADDR': '192.0.2.1'}
    request = StockTestRequest(environ=environ)
    environ[keys.REQUEST_KEY] = request
    stage(environ, lambda *args: None)
    return request.principal


def test_unknown_login_of_a_principal_folder_costs_one_check(stage,
                                                             bcrypt_checks):
    assert login(stage, 'known', 'the-password').id == 'local.known'
    assert login(stage, 'known', 'wrong') is None
    assert login(stage, 'unknown', 'guess') is None
    assert bcrypt_checks == [b'the-password', b'wrong', b'guess']
