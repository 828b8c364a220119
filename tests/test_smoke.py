

def test_default_site_serves_404_for_root_without_views(make_testapp):
    app = make_testapp()
    response = app.get('/', status=404)
    assert b'Not Found' in response.body
    assert b'Traceback' not in response.body
