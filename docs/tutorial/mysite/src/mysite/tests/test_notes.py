"""mysite's functional tests, published through zope.pipeline by its test
layer (a drop-in for zope.app.wsgi.testlayer.BrowserLayer)."""

import unittest

import transaction
from zope.testbrowser.wsgi import Browser

import mysite
from mysite.note import Note
from zope.pipeline.testing import BrowserLayer

LAYER = BrowserLayer(mysite, 'ftesting.zcml')


class NoteTests(unittest.TestCase):

    layer = LAYER

    def setUp(self):
        self.layer.getRootFolder()['hello'] = Note('Hello', 'My first note.')
        transaction.commit()
        self.browser = Browser(wsgi_app=self.layer.make_wsgi_app())

    def test_a_note_shows_its_title_and_text(self):
        self.browser.open('http://localhost/hello')
        self.assertIn('<h1>Hello</h1>', self.browser.contents)
        self.assertIn('My first note.', self.browser.contents)

    def test_the_response_says_how_long_the_site_took(self):
        self.browser.open('http://localhost/hello')
        timing = self.browser.headers['Server-Timing']
        self.assertTrue(timing.startswith('app;dur='), timing)
