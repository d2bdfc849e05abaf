import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
django_application = get_wsgi_application()
# What loading the app allocated lives as long as the process: out of the collector's sight, a
# full collection no longer walks it on every few requests (a comparison's p95 fell 422 -> 248 ms
# in bench/comparison_speed.py).
gc.freeze()

from portal.middleware import ChunkedBodyWSGI  # noqa: E402 - after Django is set up

# Chunked request bodies (no Content-Length) are read, not taken as empty: portal/middleware.py
application = ChunkedBodyWSGI(django_application)
