"""Browser views of the sample site.

Views work on the security-proxied context traversal gives them, so the
declarations in configure.zcml decide what each principal may read and
change.  Forms that write accept POST only (405 otherwise) and redirect
(303) to the page they changed; the comment form redirects to its page
when the comment is refused too, saying why next to the form (a reload
does not post it again).
"""

import html
import json
import os
import re
from urllib.parse import quote

from zope.browserpage import ViewPageTemplateFile
from zope.component import getUtility
from zope.container.interfaces import IReadContainer
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces.http import MethodNotAllowed
from zope.traversing.browser.absoluteurl import absoluteURL

from zope.pipeline.engine.introspect import describe_request_factories
from zope.pipeline.engine.introspect import format_text
from zope.pipeline.http.logtext import short_path
from zope.pipeline.interfaces import IPublisher
from zope.pipeline.sample.content import COMMENT_LIMITS
from zope.pipeline.sample.interfaces import InvalidComment
from zope.pipeline.sample.interfaces import ITitled
from zope.pipeline.security.models import TRUSTED_VIEW_INTERFACES

#: The title of the root folder (the site), which has none of its own.
SITE_TITLE = 'zope.pipeline sample site'

#: The name of the static resource directory (``/@@/<name>/style.css``).
RESOURCES = 'zope.pipeline.sample'

#: Characters zope.traversing leaves unquoted in the names of URLs.
URL_SAFE = '@+'

#: Why a comment was refused (the ``comment_error`` of the page's URL
#: after the redirect), and what the page says next to the form.  Only
#: these texts are shown: the URL names one, it never carries text.
COMMENT_ERRORS = {
    'empty': 'The comment is empty: write something in the Comment field.',
    'too-long': COMMENT_LIMITS,
}
#: The anchor of the comment form (the redirect of a refused comment).
COMMENT_FORM = 'comment-form'

#: How deep and how many results the search goes.
SEARCH_DEPTH = 6
SEARCH_LIMIT = 50


def title_of(ob):
    if ITitled.providedBy(ob):
        return ob.title
    return ob.__name__ or SITE_TITLE


def child_url(container_url, name):
    """The URL of the item ``name`` of the container at ``container_url``,
    as zope.traversing's AbsoluteURL makes it (which would walk up to the
    root again for every item)."""
    return '%s/%s' % (container_url, quote(name.encode('utf-8'), URL_SAFE))


def require_post(context, request):
    if request.method != 'POST':
        raise post_only(context, request)


def post_only(context, request):
    """405, POST allowed (returned, not raised: the raising frame keeps no
    local holding the error, which would be a cycle through its
    traceback)."""
    error = MethodNotAllowed(context, request)
    error.allow = ['POST']
    return error


def form_text(name, value):
    """A form field a view reads as text; given as a list or record
    (``:list``, ``:record`` markers) it is a bad request (400)."""
    if not isinstance(value, str):
        raise BadRequest('The form field %r must be text.' % name)
    return value


class SampleView:
    """What every page of the site shows: title, site links, stylesheet."""

    #: The name of a page that is not the context's own (its last
    #: breadcrumb), e.g. 'Edit'; None for the context's page.
    page_name = None

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def title(self):
        return title_of(self.context)

    def breadcrumbs(self):
        """[{'title', 'url'}] from the site's root to this page; the page
        itself has no URL (it is where the reader is)."""
        chain = []
        ob = self.context
        while ob is not None:
            chain.append(ob)
            ob = ob.__parent__
        chain.reverse()
        crumbs = [{'title': title_of(ob), 'url': self.url(ob)}
                  for ob in chain]
        if self.page_name is None:
            crumbs[-1]['url'] = None
        else:
            crumbs.append({'title': self.page_name, 'url': None})
        return crumbs

    def site_url(self):
        return self.request.getApplicationURL()

    def style_url(self):
        return '%s/@@/%s/style.css' % (self.site_url(), RESOURCES)

    #: The context's URL, once computed (pages use it several times).
    _url = None

    def url(self, ob=None):
        if ob is not None:
            return absoluteURL(ob, self.request)
        if self._url is None:
            self._url = absoluteURL(self.context, self.request)
        return self._url

    def redirect(self, url):
        self.request.response.redirect(url, status=303)
        return ''


class FolderView(SampleView):
    """A folder (the site's root too): its children with their titles."""

    template = ViewPageTemplateFile('templates/folder.pt')

    def is_site_root(self):
        """The root folder tells what the sample site demonstrates."""
        return self.context.__parent__ is None

    def children(self):
        url = self.url()
        return [{'title': title_of(ob), 'url': child_url(url, name)}
                for name, ob in sorted(self.context.items())]

    def __call__(self):
        return self.template()


class PageView(SampleView):
    """A page: its body, its items, its newest comments, the form."""

    template = ViewPageTemplateFile('templates/page.pt')

    @property
    def error(self):
        """Why the comment form was refused, from the URL the refusal
        redirected to (a known reason, or nothing)."""
        reason = self.request.form.get('comment_error')
        return COMMENT_ERRORS.get(reason, '') if isinstance(reason, str) \
            else ''

    def page(self):
        """What the template shows, read once: the template then looks up
        keys of a dict instead of adapting the view or the context for
        every expression."""
        context = self.context
        return {'title': context.title, 'body': context.body,
                'url': self.url(), 'site_url': self.site_url(),
                'style_url': self.style_url(), 'items': self.items(),
                'comments': self.comments(),
                'comment_count': self.comment_count(), 'error': self.error}

    def items(self):
        url = self.url()
        return [{'title': item.title, 'url': child_url(url, name)}
                for name, item in self.context.items()]

    def comments(self):
        return self.context.recent_comments(10)

    def comment_count(self):
        return self.context.comment_count()

    def __call__(self):
        return self.template()


class ItemView(SampleView):
    """An item: its title and body."""

    template = ViewPageTemplateFile('templates/item.pt')

    def __call__(self):
        return self.template()


class AddComment(SampleView):
    """POST author and text: store a comment and redirect to the page;
    a refused one redirects to the form, which says why."""

    def __call__(self, text='', author=''):
        require_post(self.context, self.request)
        author = form_text('author', author)
        text = form_text('text', text)
        if not text.strip():
            return self.refuse('empty')
        try:
            self.context.add_comment(author, text)
        except InvalidComment:
            return self.refuse('too-long')
        return self.redirect(self.url() + '#comments')

    def refuse(self, reason):
        """Back to the page, the reason next to its form (GET: a reload
        shows it again and posts nothing)."""
        return self.redirect('%s?comment_error=%s#%s' % (
            self.url(), reason, COMMENT_FORM))


class EditPage(SampleView):
    """Change a page's title and body (zope.ManageContent)."""

    template = ViewPageTemplateFile('templates/edit.pt')
    page_name = 'Edit'
    error = ''

    def __call__(self, title=None, body=None):
        if self.request.method != 'POST':
            return self.template()
        title = form_text('title', title or '').strip()
        body = form_text('body', body or '')
        if not title or len(title) > 200 or len(body) > 20000:
            self.request.response.setStatus(400)
            self.error = ('A page needs a title of at most 200 characters '
                          'and a body of at most 20000.')
            return self.template()
        self.context.title = title
        self.context.body = body
        return self.redirect(self.url())


class Search(SampleView):
    """Titles containing the words of ``q`` (case-insensitive), below
    the context."""

    template = ViewPageTemplateFile('templates/search.pt')
    page_name = 'Search'

    def __call__(self, q=''):
        self.query = form_text('q', q).strip()
        self.found = self.search(self.query)
        return self.template()

    def count(self):
        return len(self.found)

    def search(self, query):
        words = query.casefold().split()
        if not words:
            return []
        found = []
        for ob in walk(self.context, SEARCH_DEPTH):
            title = ob.title
            if all(word in title.casefold() for word in words):
                found.append({'title': title, 'url': self.url(ob)})
                if len(found) >= SEARCH_LIMIT:
                    break
        return found


def walk(container, depth):
    """Titled objects below ``container``, depth first, by name."""
    for _name, ob in sorted(container.items()):
        if ITitled.providedBy(ob):
            yield ob
        if depth > 1 and IReadContainer.providedBy(ob):
            yield from walk(ob, depth - 1)


class PipelineView(SampleView):
    """The administrator's picture of what ``zope-pipeline
    show-pipeline`` prints for this site: the outer chain every request
    goes through, then, per request type, the inner chain the switch
    chooses, each stage a box with its contract, settings and where it
    was registered (the settings name files and addresses: the
    permission is zope.pipeline.ViewMetrics).  The text itself is at the
    bottom of the page."""

    template = ViewPageTemplateFile('templates/pipeline.pt')
    page_name = 'Pipeline'

    def __init__(self, context, request):
        super().__init__(context, request)
        publisher = getUtility(IPublisher)
        self.data = publisher.describe()
        self.factories = describe_request_factories(publisher)

    def picture(self):
        return pipeline_picture(self.data, self.factories)

    def chains(self):
        return format_text(self.data, None, self.factories)

    def pipeline_style_url(self):
        return '%s/@@/%s/pipeline.css' % (self.site_url(), RESOURCES)

    def __call__(self):
        return self.template()


#: What each security model means for the code behind a view.
SECURITY_MODELS = {
    'proxied': 'Traversal wraps every object it reaches in a security '
               'proxy: each attribute a view, a template or a traverser '
               'touches is checked against the permission its class '
               'requires.',
    'view-checked': 'Traversal hands back the objects themselves and the '
                    'call stage checks the permission of the published '
                    'view once: the code behind the view is trusted. Only '
                    'trusted views get bare objects (%s); any other view '
                    'stays security-proxied.',
}


def pipeline_picture(data, factories):
    """``{'outer': [stage], 'request_types': [request type]}`` for the
    page, from ``publisher.describe()`` and
    ``describe_request_factories()``: the stages numbered in the order
    a request meets them (the inner ones after the outer ones), each
    with what the page shows of it."""
    trusted = ', '.join('%s.%s' % item for item in TRUSTED_VIEW_INTERFACES)
    outer = None
    request_types = []
    for name, info in data['request_types'].items():
        stages = [page_stage(number, stage)
                  for number, stage in enumerate(info['stages'], 1)]
        if outer is None:
            outer = [stage for stage in stages if stage['part'] == 'outer']
        origin = info['origin']
        model = origin['security']
        factory = factories.get(name, {})
        request_types.append({
            'name': name,
            'methods': ' '.join(factory.get('methods', ())),
            'mimetypes': ' '.join(factory.get('mimetypes', ())),
            'priority': factory.get('priority'),
            'made_from': (
                'the publication %s (<publisher>)' % origin['publication']
                if origin['publication'] else 'pipeline:requestFactory'),
            'registered_at': place(origin['registered_at']),
            'security': model,
            'security_text': security_text(model, trusted),
            'security_chosen_at': (place(origin['security_chosen_at'])
                                   if origin['security_chosen_at']
                                   else None),
            'interfaces': ', '.join(short_name(iface)
                                    for iface in info['interfaces']),
            'request_class': breakable(factory.get('factory', '')),
            'stages': [stage for stage in stages
                       if stage['part'] == 'inner'],
        })
    return {'outer': outer or [], 'request_types': request_types}


def security_text(model, trusted):
    """What the security model ``model`` means (``trusted``: the
    interfaces of the views the view-checked model trusts)."""
    text = SECURITY_MODELS.get(model, '')
    if model == 'view-checked':
        text = text % trusted
    return text


def page_stage(number, stage):
    """One stage of ``describe()``, as its box on the page shows it."""
    return {
        'number': number,
        'name': stage['name'],
        'part': stage['part'],
        'factory': breakable(stage['factory']),
        'for': short_name(stage['for']) if stage['for'] else None,
        'registered_at': place(stage['registered_at']),
        'constraints': '; '.join(
            '%s %s' % (relation, ', '.join(stage[relation]))
            for relation in ('before', 'after') if stage[relation]),
        'settings': [{'key': key, 'value': breakable(json.dumps(value))}
                     for key, value in sorted(stage['settings'].items())],
        'declared': stage['contract_declared'],
        'contract': [{'label': label,
                      'keys': [breakable(item) for item in stage[key]]}
                     for key, label in (('reads', 'reads'),
                                        ('reads_if_present', 'may read'),
                                        ('writes', 'writes'))
                     if stage[key] or key != 'reads_if_present'],
        'publishes': stage['publishes'],
        'passes_through': stage.get('passes_through', False),
    }


def short_name(identifier):
    """The last part of a dotted name (``IBrowserRequest``)."""
    return identifier.rsplit('.', 1)[-1]


def place(registered_at):
    """``{'short', 'full'}`` of a registration's file:line: the path
    relative to the ``sys.path`` entry holding it
    (``zope/pipeline/pipeline.zcml:23``), else to the current directory
    when it is below it (``etc/site.zcml:15``)."""
    short = short_path(registered_at)
    here = os.getcwd() + os.sep
    if short == registered_at and short.startswith(here):
        short = short[len(here):]
    return {'short': breakable(short), 'full': registered_at}


def breakable(text):
    """``text`` as HTML, with a line break opportunity (``<wbr>``) after
    each dot and slash, so a long dotted name or path breaks
    between its parts rather than anywhere."""
    return re.sub(r'([./])', r'\1<wbr>', html.escape(text, quote=False))


class CounterView(SampleView):
    """The counter's value, as text."""

    def __call__(self):
        self.request.response.setHeader('Content-Type',
                                        'text/plain;charset=utf-8')
        return str(self.context.value)


class Increment(CounterView):
    """POST: add one to the counter; answer the new value, as text."""

    def __call__(self):
        require_post(self.context, self.request)
        self.request.response.setHeader('Content-Type',
                                        'text/plain;charset=utf-8')
        return str(self.context.increment())


class NotFoundPage(SampleView):
    """The site's 404 page (the exception view of NotFound)."""

    template = ViewPageTemplateFile('templates/notfound.pt')

    def __call__(self):
        self.request.response.setStatus(404)
        return self.template()
