"""schedbench settings. The environment is read once, here, through portal.envconfig; every
variable is listed in the README's configuration table (a test checks)."""

from pathlib import Path

from portal.envconfig import (
    database_from_url,
    env_bool,
    env_header,
    env_int,
    env_list,
    env_path,
    env_required,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# Like healthchecks: development by default; production sets DEBUG=0 and then must set SECRET_KEY.
DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY") or (
    "insecure-dev-key-only-for-debug" if DEBUG else env_required("SECRET_KEY")
)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

DATA_DIR = env_path("SCHEDBENCH_DATA_DIR", BASE_DIR / "var")
MAX_UPLOAD_MB = env_int("SCHEDBENCH_MAX_UPLOAD_MB", 256, minimum=1)
# Traces are bigger than benchmark output; they stream from disk, so the limit is about disk.
TRACE_MAX_UPLOAD_MB = env_int("SCHEDBENCH_TRACE_MAX_MB", 1024, minimum=1)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_results",
    "benchmarks",
    "discussions",
    "simulations",
    "traces",
    "regressions",
    "bisection",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "portal.middleware.ContentSecurityPolicyMiddleware",
    "portal.middleware.RequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so its process_exception sees a view's database error first.
    "portal.middleware.DatabaseOutageMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(
        "DATABASE_URL", env_str("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'schedbench.sqlite3'}"
    )
}
SQLITE_BUSY_TIMEOUT = env_int("SCHEDBENCH_SQLITE_BUSY_TIMEOUT", 30, minimum=1)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default is shared by the web server and worker processes. WAL lets readers
    # go on while one writer writes; a writer waits up to the busy timeout for another; and
    # transactions take the write lock when they begin (IMMEDIATE), so two of them can never
    # both read and then fail to upgrade to writing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": SQLITE_BUSY_TIMEOUT,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Frozen comparison pages are cached whole; a file cache is shared by every worker process on a
# host, so the second reader never waits for a render whichever process answers.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(DATA_DIR / "cache"),
        "OPTIONS": {"MAX_ENTRIES": 2000},
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
# Plotly.js is served from the copy inside the pinned plotly package: same version, never a CDN.
# Plotly.js is the project's own partial bundle (static/vendor/, built by `make plotly-bundle`),
# not the full copy inside the plotly package.
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed names, gzip/brotli copies and far-future caching (collectstatic writes them; `make run`
# and `make test` run it). With DEBUG on, pages link the plain names served from the sources.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Durable copies of frozen permalinks, served while the database is down (comparisons.pagecache).
FROZEN_PAGES_DIR = DATA_DIR / "frozen"
MEDIA_ROOT = env_path("SCHEDBENCH_MEDIA_DIR", DATA_DIR / "media")  # raw uploads, mbox imports
MEDIA_URL = "/media/"

DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_MB * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
FILE_UPLOAD_TEMP_DIR = None

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the upload page's fetch() reads it to send X-CSRFToken
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "SAMEORIGIN"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
# Behind a TLS-terminating proxy: SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto=https, then
# SECURE_SSL_REDIRECT=1 and SECURE_HSTS_SECONDS=31536000 once every page is on HTTPS.
SECURE_PROXY_SSL_HEADER = env_header("SECURE_PROXY_SSL_HEADER")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Pages run only the site's own scripts (no inline script anywhere); Plotly and the charts add
# inline styles, and charts export PNG/SVG through data: and blob: URLs.
CONTENT_SECURITY_POLICY = env_str("SCHEDBENCH_CSP") or (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'"
)
# While the database is down, the API and pages answer 503 with this Retry-After (seconds).
OUTAGE_RETRY_AFTER = env_int("SCHEDBENCH_OUTAGE_RETRY_AFTER", 30, minimum=1)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "benchmarks.api.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "benchmarks.api.schema.ErrorDocumentingSchema",
    "EXCEPTION_HANDLER": "benchmarks.api.errors.json_error_handler",
    # JSON only (endpoints taking files say so themselves), nested at most
    # benchmarks.api.jsonbody.MAX_DEPTH levels; the schema then lists one media type each
    "DEFAULT_PARSER_CLASSES": ["benchmarks.api.jsonbody.DepthLimitedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "schedbench API",
    "DESCRIPTION": "Scheduler benchmark results: runs, samples, machines, kernels.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Request and response components differ (read-only fields, files): keep them apart.
    "COMPONENT_SPLIT_REQUEST": True,
    # Two `status` choice sets (simulation jobs, regression findings) need distinct names.
    "ENUM_NAME_OVERRIDES": {
        "RegressionStatusEnum": "regressions.models.Status",
        # A verdict's `role` and each of its `roles` are one choice set.
        "VerdictRoleEnum": ["baseline", "previous"],
    },
}

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport with atomic writes and claims (portal/fsbroker.py): kombu's
    # own lets a worker read a message half-written and die when several workers share it
    CELERY_BROKER_TRANSPORT = "portal.fsbroker:Transport"
    _broker_dir = DATA_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),  # kombu's default is the CWD
        "store_processed": False,
        # kombu checks the folder again this often once a worker is free (default 1 s): each
        # message waited that long, so a 100-point sweep lost 100 s and the demo's detection
        # backlog held a new user's first simulation for a minute
        "polling_interval": 0.1,
    }
    for _sub in ("queue", "processed", "control", "rejected"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
else:
    # A worker that dies keeps its unacked messages; Redis hands them out again after this.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=10)
    }
CELERY_RESULT_BACKEND = "django-db"
CELERY_RESULT_EXTENDED = True
CELERY_TASK_DEFAULT_QUEUE = env_str("SCHEDBENCH_CELERY_QUEUE") or "schedbench"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Simulation jobs (simulations): per-job limits, time limit per point, and the
# heartbeat/stale intervals of the watchdog that re-queues points of a dead worker.
SIMULATION_MAX_POINTS = env_int("SCHEDBENCH_SIMULATION_MAX_POINTS", 500, minimum=1)
SIMULATION_MAX_EVENTS_PER_RUN = env_int("SCHEDBENCH_SIMULATION_MAX_EVENTS_PER_RUN", 20_000_000,
                                        minimum=1)
SIMULATION_MAX_EVENTS = env_int("SCHEDBENCH_SIMULATION_MAX_EVENTS", 20_000_000_000, minimum=1)
# A job with "trace": true keeps the ftrace text of each point's first repeat up to this size.
SIMULATION_TRACE_MAX_EVENTS = env_int("SCHEDBENCH_SIMULATION_TRACE_MAX_EVENTS", 200_000,
                                      minimum=1)
SIMULATION_POINT_TIME_LIMIT = env_int("SCHEDBENCH_SIMULATION_TIME_LIMIT", 600, minimum=1)
SIMULATION_HEARTBEAT_SECONDS = env_int("SCHEDBENCH_SIMULATION_HEARTBEAT", 5, minimum=1)
SIMULATION_STALE_SECONDS = env_int("SCHEDBENCH_SIMULATION_STALE", 60, minimum=2)
SIMULATION_RESEND_SECONDS = env_int("SCHEDBENCH_SIMULATION_RESEND", 60, minimum=5)
SIMULATION_MAX_ATTEMPTS = env_int("SCHEDBENCH_SIMULATION_MAX_ATTEMPTS", 3, minimum=1)

# Regression detection tasks (regressions.jobs): attempts before a failing task is parked, the
# first retry delay (doubled each attempt), how often every worker sweeps for lost or stale
# tasks and changed series, when a claimed task counts as dead, and when a queued one is resent.
REGRESSION_MAX_ATTEMPTS = env_int("SCHEDBENCH_REGRESSION_MAX_ATTEMPTS", 4, minimum=1)
REGRESSION_RETRY_SECONDS = env_int("SCHEDBENCH_REGRESSION_RETRY_SECONDS", 30, minimum=1)
REGRESSION_SWEEP_SECONDS = env_int("SCHEDBENCH_REGRESSION_SWEEP_SECONDS", 60, minimum=1)
REGRESSION_STALE_SECONDS = env_int("SCHEDBENCH_REGRESSION_STALE_SECONDS", 900, minimum=1)
REGRESSION_RESEND_SECONDS = env_int("SCHEDBENCH_REGRESSION_RESEND_SECONDS", 120, minimum=1)
# Trace uploads up to this size are ingested in the request; larger ones by a worker (202).
TRACE_INLINE_KB = env_int("SCHEDBENCH_TRACE_INLINE_KB", 1024, minimum=0)

EMAIL_BACKEND = env_str("EMAIL_BACKEND") or (
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend"
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL") or "schedbench@localhost"
# For EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend.
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH") or str(DATA_DIR / "mail")
# Absolute links in mail sent by workers (which have no request to read a host from).
SCHEDBENCH_SITE_URL = (env_str("SCHEDBENCH_SITE_URL") or "").rstrip("/")
# Discussions: posts (threads and replies) one user may write per hour, on the site or the API;
# posts per page of a thread; the domain of the Message-IDs the site makes.
DISCUSSIONS_POSTS_PER_HOUR = env_int("SCHEDBENCH_POSTS_PER_HOUR", 30, minimum=1)
DISCUSSIONS_POSTS_PER_PAGE = env_int("SCHEDBENCH_POSTS_PER_PAGE", 200, minimum=1)
DISCUSSIONS_MAIL_DOMAIN = env_str("SCHEDBENCH_MAIL_DOMAIN") or "schedbench.local"
# An mbox import runs in a worker; the API request waits this long for it before answering 202.
IMPORT_WAIT_SECONDS = env_int("SCHEDBENCH_IMPORT_WAIT", 10, minimum=0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL") or "WARNING"},
}

for _folder in (DATA_DIR, MEDIA_ROOT, STATIC_ROOT, FROZEN_PAGES_DIR):
    _folder.mkdir(parents=True, exist_ok=True)
