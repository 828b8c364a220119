"""mysite's notes: who may add one, and the stage's header, through
zope.pipeline's test layer."""

import unittest
import urllib.error

from mysite.tests.test_site import LAYER
from zope.testbrowser.wsgi import Browser


class NoteTests(unittest.TestCase):

    layer = LAYER

    def setUp(self):
        self.browser = Browser(wsgi_app=self.layer.make_wsgi_app())
        self.browser.handleErrors = True

    def test_anonymous_visitors_get_401_on_the_add_form(self):
        with self.assertRaises(urllib.error.HTTPError) as raised:
            self.browser.open('http://localhost/@@add-note')
        self.assertEqual(raised.exception.code, 401)
        self.assertNotIn('opening-hours', self.layer.getRootFolder())

    def test_an_editor_adds_a_note(self):
        self.browser.addHeader('Authorization', 'Basic editor:editor')
        self.browser.open('http://localhost/@@add-note')
        self.browser.getControl('Title').value = 'Opening hours'
        self.browser.getControl('Text').value = 'Every day.'
        self.browser.getControl('Save').click()
        self.assertEqual(self.browser.url, 'http://localhost/opening-hours')
        self.assertIn('<p class="note">Every day.</p>',
                      self.browser.contents)

    def test_the_response_says_how_long_the_site_took(self):
        self.browser.open('http://localhost/')
        timing = self.browser.headers['Server-Timing']
        self.assertTrue(timing.startswith('app;dur='), timing)
