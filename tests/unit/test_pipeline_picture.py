"""What the pipeline page (@@pipeline.html) shows of the chains a
publisher describes (zope.pipeline.sample.views.pipeline_picture)."""

from zope.pipeline.sample.views import breakable
from zope.pipeline.sample.views import pipeline_picture


def stage(name, part, number_of_settings=0, **more):
    described = {
        'name': name, 'part': part, 'factory': 'app.stages.%s' % name,
        'for': None if part == 'outer' else 'app.interfaces.IAppRequest',
        'settings': {'key%d' % n: n for n in range(number_of_settings)},
        'before': [], 'after': [], 'registered_at': '/srv/app/site.zcml:3',
        'passes_through': False, 'reads': [], 'reads_if_present': [],
        'writes': [], 'publishes': False, 'contract_declared': True}
    described.update(more)
    return described


def described(security='view-checked', chosen_at='/srv/app/site.zcml:9'):
    return {'request_types': {'app': {
        'interfaces': ['app.interfaces.IAppRequest'],
        'origin': {'security': security, 'security_chosen_at': chosen_at,
                   'publication': None, 'registered_by':
                   'pipeline:requestFactory',
                   'registered_at': '/srv/app/site.zcml:5'},
        'stages': [stage('first', 'outer', 2, after=['x']),
                   stage('second', 'inner', reads=['a.b'],
                         contract_declared=False),
                   stage('call', 'inner', publishes=True,
                         passes_through=True)]}}}


def test_a_view_checked_chain_says_only_trusted_views_get_bare_objects():
    picture = pipeline_picture(described(), {})
    [request_type] = picture['request_types']
    assert request_type['security'] == 'view-checked'
    text = request_type['security_text']
    assert 'Only trusted views get bare objects' in text
    assert 'zope.pipeline.interfaces.ITrustedView' in text
    assert 'grokcore.view.interfaces.IGrokSecurityView' in text
    assert request_type['security_chosen_at']['full'] == \
        '/srv/app/site.zcml:9'


def test_the_stages_are_numbered_outer_first_and_described():
    picture = pipeline_picture(described('proxied', None), {})
    [first] = picture['outer']
    [request_type] = picture['request_types']
    second, call = request_type['stages']
    assert [first['number'], second['number'], call['number']] == [1, 2, 3]
    assert first['constraints'] == 'after x'
    assert first['settings'] == [{'key': 'key0', 'value': '0'},
                                 {'key': 'key1', 'value': '1'}]
    assert not second['declared'] and second['for'] == 'IAppRequest'
    assert call['publishes'] and call['passes_through']
    assert 'proxy' in request_type['security_text']
    assert request_type['security_chosen_at'] is None


def test_long_names_break_between_their_parts_escaped():
    assert breakable('a.b/<c>') == 'a.<wbr>b/<wbr>&lt;c&gt;'


def test_a_request_type_of_a_publisher_names_its_publication():
    data = described()
    data['request_types']['app']['origin']['publication'] = 'grok'
    [request_type] = pipeline_picture(data, {'app': {
        'factory': 'app.AppRequest', 'methods': ['GET'], 'mimetypes': ['*'],
        'priority': 5, 'registered_at': '/srv/app/site.zcml:5'}})[
            'request_types']
    assert request_type['made_from'] == 'the publication grok (<publisher>)'
    assert request_type['methods'] == 'GET' and request_type['priority'] == 5
