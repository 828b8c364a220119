"""A view for the security tests: it fails as a bug would, with an error
whose text names a file of the server."""

import os


class Explode:
    """Raise an error that names this file (a server path)."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        raise RuntimeError('cannot open %s <script>alert(1)</script>'
                           % os.path.abspath(__file__))
