import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
django_application = get_wsgi_application()

from portal.middleware import ChunkedBodyWSGI  # noqa: E402 - after Django is set up

# Chunked request bodies (no Content-Length) are read, not taken as empty: portal/middleware.py
application = ChunkedBodyWSGI(django_application)
