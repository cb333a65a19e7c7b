"""Settings shared by every environment. Everything deployment-specific comes from the
environment (see docs/configuration.md and .env.example)."""

import os
from datetime import date, timedelta

from django.core.exceptions import ImproperlyConfigured

from config.celery_broker import amqp_celery_config, broker_is_amqp
from config.env import BASE_DIR, VAR_DIR, env
from core.api.schema_components import API_TAGS, SCHEMA_COMPONENTS
from core.crypto import development_key

DEFAULT_SECRET_KEY = "django-insecure-local-development-key-change-me"  # noqa: S105

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default=DEFAULT_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEFAULT_SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is the built-in development key; set SECRET_KEY (or DEBUG=1 locally)."
    )
# Keys of the values encrypted at rest (webhook secrets; core.crypto): Fernet keys, comma-separated,
# the first encrypts and every one decrypts. DEBUG and the tests run on the public development
# key; with DEBUG off the service refuses to start on it or without a key (deployment.py).
DEFAULT_FIELD_ENCRYPTION_KEY = development_key()
FIELD_ENCRYPTION_KEYS = env.list("FIELD_ENCRYPTION_KEYS", default=[DEFAULT_FIELD_ENCRYPTION_KEY])

PORT = env.int("PORT", default=8000)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CHECKOUT_BASE_URL = env.str("CHECKOUT_BASE_URL", default=f"http://127.0.0.1:{PORT}").rstrip("/")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

VAR_DIR.mkdir(exist_ok=True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "axes",
    "core",
    "merchants",
    "wallets",
    "payouts",
    "payment_items",
    "beneficiaries",
    "collections_app",
    "webhooks",
    "audit",
    "reconciliation",
    "settlements",
    "refunds",
    "sweeps",
]

MIDDLEWARE = [
    # First: every later middleware's answer carries the request id and is counted.
    "core.request_id.RequestIdMiddleware",
    "core.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.middleware.RequestGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    # Staff-account changes made during a request are recorded with its signed-in user.
    "audit.middleware.AuditActorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: turns a locked-out admin login into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

# --- Staff sign-in (the admin) ----------------------------------------------------------------
# django-axes counts failed admin logins per username and client address and locks that pair
# out for a cool-off period; the client address is REMOTE_ADDR (the proxy's, behind one).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_SENSITIVE_PARAMETERS = ["password", "otp_token"]
# No start-up banner in every process (it would open every ops command's stderr); lockouts are
# still logged with the username and address they apply to.
AXES_VERBOSE = False
# TOTP second factor (django-otp): with OTP_REQUIRED the admin admits only staff verified by a
# confirmed TOTP device (`manage.py staff_totp_enrol --username U` enrols one).
OTP_REQUIRED = env.bool("OTP_REQUIRED", default=False)
OTP_TOTP_ISSUER = env.str("OTP_TOTP_ISSUER", default="Merchant Payments")
OTP_ADMIN_HIDE_SENSITIVE_DATA = True  # device keys and QR codes never shown in the admin
# Two-person rules (audit.two_person): an account whose password or TOTP devices someone else
# set within this many hours may not approve another user's proposal yet.
STAFF_CREDENTIAL_RESET_HOLD_HOURS = env.int("STAFF_CREDENTIAL_RESET_HOLD_HOURS", default=24)

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
APPEND_SLASH = False

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

# --- Database -------------------------------------------------------------------------------
# PostgreSQL, always: DATABASE_URL, else the embedded server `make run` starts on a Unix socket
# under var/ (scripts/embedded_db.py), so `manage.py` reaches it while the service runs.
EMBEDDED_DATABASE_URL = (
    f"postgres://postgres@/merchant_payments?host={VAR_DIR.resolve() / 'postgres'}"
)
DATABASES = {"default": env.db("DATABASE_URL", default=EMBEDDED_DATABASE_URL)}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_URL must name a PostgreSQL database (postgres://...).")
# A socket directory given as ?host=/path (libpq's form) is the connection's host.
if not DATABASES["default"]["HOST"] and "host" in DATABASES["default"].get("OPTIONS", {}):
    DATABASES["default"]["HOST"] = DATABASES["default"]["OPTIONS"].pop("host")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("CONN_HEALTH_CHECKS", default=True)
# Behind PgBouncer in transaction mode a connection may change server between transactions:
# no server-side cursors (QuerySet.iterator() would DECLARE one). Parameters are bound on the
# client (Django's default for psycopg 3), so no prepared statement outlives its transaction.
if env.bool("DATABASE_TRANSACTION_POOLING", default=False):
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Celery ---------------------------------------------------------------------------------
# Embedded default: kombu's filesystem transport under var/, served by a real worker process.
CELERY_BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
# kombu's in-process transports (filesystem, memory) ignore the host, yet kombu logs "No
# hostname was supplied. Reverting to default 'localhost'" at every pooled publish to a URL
# without one: the URL names it.
for _scheme in ("filesystem://", "memory://"):
    if CELERY_BROKER_URL.startswith(_scheme) and CELERY_BROKER_URL[len(_scheme) :][:1] in ("", "/"):
        CELERY_BROKER_URL = f"{_scheme}localhost{CELERY_BROKER_URL[len(_scheme) :] or '/'}"
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    for _sub in ("out", "processed", "control"):
        (CELERY_BROKER_DIR / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "out"),
        "data_folder_out": str(CELERY_BROKER_DIR / "out"),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
    }
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        # A black-holed broker fails a publish (logged; the create still answers) within these,
        # where the defaults wait forever. The read timeout stays above the worker's 1 s BRPOP.
        CELERY_BROKER_TRANSPORT_OPTIONS["socket_connect_timeout"] = env.float(
            "CELERY_BROKER_CONNECT_TIMEOUT", default=1.0
        )
        CELERY_BROKER_TRANSPORT_OPTIONS["socket_timeout"] = env.float(
            "CELERY_BROKER_SOCKET_TIMEOUT", default=2.0
        )
    elif broker_is_amqp(CELERY_BROKER_URL):
        # RabbitMQ: quorum queues, publisher confirms, bounded connects and publishes, delays
        # kept by the broker (config/celery_broker.py says why each).
        _amqp = amqp_celery_config(
            connect_timeout=env.float("CELERY_BROKER_CONNECT_TIMEOUT", default=1.0),
            publish_timeout=env.float("CELERY_BROKER_PUBLISH_TIMEOUT", default=2.0),
        )
        CELERY_TASK_DEFAULT_QUEUE_TYPE = _amqp["task_default_queue_type"]
        CELERY_TASK_CREATE_MISSING_QUEUE_TYPE = _amqp["task_create_missing_queue_type"]
        CELERY_TASK_DEFAULT_EXCHANGE_TYPE = _amqp["task_default_exchange_type"]
        CELERY_TASK_CREATE_MISSING_QUEUE_EXCHANGE_TYPE = _amqp[
            "task_create_missing_queue_exchange_type"
        ]
        CELERY_WORKER_DETECT_QUORUM_QUEUES = _amqp["worker_detect_quorum_queues"]
        CELERY_BROKER_NATIVE_DELAYED_DELIVERY_QUEUE_TYPE = _amqp[
            "broker_native_delayed_delivery_queue_type"
        ]
        CELERY_BROKER_CONNECTION_TIMEOUT = _amqp["broker_connection_timeout"]
        CELERY_BROKER_TRANSPORT_OPTIONS = _amqp["broker_transport_options"]
        CELERY_BROKER_PUBLISH_TIMEOUT = _amqp["broker_publish_timeout"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# Celery's Django fixup would close the database connections around every task; with this set it
# does so only every this many tasks, and config.celery_app applies CONN_MAX_AGE and the health
# checks instead.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Worker and beat log through LOGGING above (config.celery_app), never Celery's own handlers.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = "UTC"
# Queues: money work (payout dispatch and requery, sweepers, expiry) on the default queue; every
# webhook task on a queue of its own, served by its own worker pool (Procfile: `worker` and
# `webhooks`), so a merchant's slow server can never hold a process that money work needs.
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_DEFAULT_QUEUE", default="celery")
WEBHOOK_QUEUE = env.str("WEBHOOK_QUEUE", default="webhooks")
CELERY_TASK_ROUTES = {"webhooks.tasks.*": {"queue": WEBHOOK_QUEUE}}
# Every task declares its own time limits; these catch one that would not.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=270)
CELERY_BEAT_SCHEDULE: dict = {}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- Internationalisation -------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
FORMAT_MODULE_PATH = ["config.formats"]
TIME_ZONE = "Africa/Lagos"
USE_I18N = True
USE_TZ = True

# --- Static files ---------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Cache (rate-limit counters, bank list) ----------------------------------------------------
# Redis in production (CACHE_URL=redis://127.0.0.1:6379/1), local memory on embedded defaults.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    CACHES["default"]["BACKEND"] = "core.cache.PooledRedisCache"  # one client per process
    # A Redis that is down or black-holed costs this long per call, and then nothing for a
    # backoff (core.cache.RedisCircuit): requests degrade instead of waiting on it.
    _cache_socket_timeout = env.float("CACHE_SOCKET_TIMEOUT", default=0.25)
    CACHES["default"].setdefault("OPTIONS", {}).update(
        {
            "socket_connect_timeout": _cache_socket_timeout,
            "socket_timeout": _cache_socket_timeout,
        }
    )
# Rate-limit scopes refused with 503 + Retry-After while the cache is down (they cost provider
# money); every other scope is let through unthrottled, with a logged warning.
THROTTLE_FAIL_CLOSED_SCOPES = frozenset(
    env.list("THROTTLE_FAIL_CLOSED_SCOPES", default=["name_enquiry"])
)

# --- Request limits -------------------------------------------------------------------------
REQUEST_BODY_MAX_BYTES = env.int("REQUEST_BODY_MAX_BYTES", default=64 * 1024)
# A bulk payout carries up to 500 payouts (about 150 bytes each, up to 1.5 KB with a long
# narration and key): it has a limit of its own.
REQUEST_BODY_MAX_BYTES_BULK = env.int("REQUEST_BODY_MAX_BYTES_BULK", default=1024 * 1024)
REQUEST_BODY_MAX_BYTES_BY_PATH = {
    "/api/v1/transactions/in/merchant-wallet/payouts/bulk": REQUEST_BODY_MAX_BYTES_BULK,
}
DATA_UPLOAD_MAX_MEMORY_SIZE = max(REQUEST_BODY_MAX_BYTES, REQUEST_BODY_MAX_BYTES_BULK, 2_621_440)

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["core.api.renderers.EnvelopeJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.StrictJSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": ["merchants.authentication.SecretKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["core.api.permissions.KeyScopePermission"],
    "EXCEPTION_HANDLER": "core.api.exceptions.envelope_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.EnvelopeAutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_CLASSES": ["core.api.throttling.SecretKeyRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "read": env.str("THROTTLE_RATE_READ", default="1200/min"),
        "write": env.str("THROTTLE_RATE_WRITE", default="600/min"),
        "name_enquiry": env.str("THROTTLE_RATE_NAME_ENQUIRY", default="60/min"),
        "event_resend": env.str("THROTTLE_RATE_EVENT_RESEND", default="30/min"),
        "payout_bulk": env.str("THROTTLE_RATE_PAYOUT_BULK", default="30/min"),
        "webhook_test": env.str("THROTTLE_RATE_WEBHOOK_TEST", default="10/min"),
    },
    "COERCE_DECIMAL_TO_STRING": True,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Merchant Payments and Wallet Payouts API",
    "DESCRIPTION": (
        "Pay out from your merchant wallet to any Nigerian bank account, and collect payments "
        "from your customers by card or bank transfer.\n\n"
        "**Authentication**: every route takes your secret key as `Authorization: Bearer "
        "<key>`. A test key (`sk_test_…`) works on the test wallet and moves no real money; a "
        "live key (`sk_live_…`) works on the live wallet. Each sees only its own mode's data. "
        "A restricted key (`rk_test_…`, `rk_live_…`, made on the Keys routes) holds only the "
        "scopes it was given: each operation names its scope (`x-required-scope`), and a key "
        "without it gets 403 naming the scope.\n\n"
        "**Answers**: every JSON answer is the envelope `{status, message, data, statusCode}`: "
        "`status` true with `data` on success, false with `data` null and a `message` naming "
        "the field on error. Payment-item routes answer an authentication failure with "
        "`{message, error, statusCode}` (403).\n\n"
        "**Money**: amounts are decimal strings in naira with at most two decimals "
        '(`"2500"`, `"2500.50"`), never numbers.\n\n'
        "**Retries**: a payout create is idempotent on your `idempotency_key`, a collection on "
        "your `transaction_reference`: after a timeout, send the same request again.\n\n"
        "**Webhooks**: your server learns outcomes from signed `POST`s to your webhook URL "
        "(`X-Webhook-Signature`, an HMAC-SHA512 of the raw body with your webhook secret); the "
        "Events routes list them and send them again."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # Swagger UI and ReDoc from the pinned drf-spectacular-sidecar's static files: the docs
    # work offline and change only when that pin does.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "REDOC_UI_SETTINGS": {
        "hideDownloadButton": False,
        "expandResponses": "200,201,202",
        "theme": {"typography": {"fontFamily": "system-ui, sans-serif"}},
    },
    "SWAGGER_UI_SETTINGS": {
        "deepLinking": True,
        "displayOperationId": False,
        "defaultModelsExpandDepth": 0,
        "docExpansion": "list",
        "tryItOutEnabled": False,
    },
    # One tag per part of the API, in reading order; each view names its own.
    "TAGS": API_TAGS,
    # drf-spectacular's enum naming first, then nullable references in a form strict
    # OpenAPI 3.0 validators accept (core/api/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.nullable_references_postprocess",
    ],
    "APPEND_COMPONENTS": {
        "schemas": SCHEMA_COMPONENTS,
    },
    # Every choice set the API answers is a named enum: a bulk payout's status beside the
    # payout's own ``status`` (which keeps ``StatusEnum``), the wallet's status, ledger entry
    # types, a collection's payment status, channel and type, a catalogue entry's status, a
    # bulk item's result, a settlement's status.
    "ENUM_NAME_OVERRIDES": {
        "StatusEnum": "payouts.models.PayoutStatus",
        "PayoutBatchStatusEnum": "payouts.models.PayoutBatchStatus",
        "WalletStatusEnum": "wallets.models.WalletStatus",
        "LedgerEntryTypeEnum": "wallets.models.LedgerEntryType",
        "PaymentStatusEnum": "collections_app.models.PaymentStatus",
        "PaymentChannelEnum": "collections_app.models.Channel",
        "PaymentTypeEnum": "collections_app.models.PaymentType",
        "CatalogueStatusEnum": "payment_items.models.CatalogueStatus",
        "PayoutBatchItemResultEnum": "payouts.models.PayoutBatchItemResult",
        "SettlementStatusEnum": "settlements.models.SettlementStatus",
    },
}

# --- Logging --------------------------------------------------------------------------------
# LOG_FORMAT: "plain" (one readable line; make run) or "json" (one object per line with the
# request id; suggested in production). Every handler runs the secret-redaction filter.
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOG_FORMAT = env.str("LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured("LOG_FORMAT must be plain or json.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "core.request_id.RequestIdLogFilter"},
        "redact_secrets": {"()": "core.logging.SecretRedactingFilter"},
        "routine_tasks": {"()": "core.logging.RoutineTaskLogFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id", "redact_secrets"],
        },
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own defaults give "django" an unfiltered console handler (DEBUG on) and
        # "django.server" one of its own: replaced, so "django.request" (Not Found: <path>)
        # and the rest reach the root's redacting handler only.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.db.backends": {"level": "INFO"},
        # Routine (beat-scheduled) task runs that did nothing log at DEBUG, not every 5 s.
        "celery.beat": {"filters": ["routine_tasks"]},
        "celery.worker.strategy": {"filters": ["routine_tasks"]},
        "celery.app.trace": {"filters": ["routine_tasks"]},
    },
}

# --- Observability: heartbeats, readiness, metrics -------------------------------------------
# Worker pools and beat record a heartbeat this often (core.heartbeats): in the cache when it is
# Redis, else in files under HEARTBEAT_DIR (make run's processes share VAR_DIR).
HEARTBEAT_STORE = env.str("HEARTBEAT_STORE", default="auto")  # auto, cache or file
HEARTBEAT_DIR = env.str("HEARTBEAT_DIR", default=str(VAR_DIR / "heartbeats"))
HEARTBEAT_INTERVAL_SECONDS = env.float("HEARTBEAT_INTERVAL_SECONDS", default=5.0)
# /readyz answers 503 when the money worker or beat has not beaten for this long.
WORKER_HEARTBEAT_STALE_SECONDS = env.float("WORKER_HEARTBEAT_STALE_SECONDS", default=30.0)
BEAT_HEARTBEAT_STALE_SECONDS = env.float("BEAT_HEARTBEAT_STALE_SECONDS", default=30.0)
# /metrics: with a token, only "Authorization: Bearer <METRICS_TOKEN>"; without, loopback only.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_STATEMENT_TIMEOUT_MS = env.int("METRICS_STATEMENT_TIMEOUT_MS", default=2000)
# Counters of every process (gunicorn and Celery workers) are kept as files here and summed by
# /metrics (prometheus-client's multiprocess mode). Handed to prometheus-client through
# PROMETHEUS_MULTIPROC_DIR, always overwritten from this setting, so a child process with
# another VAR_DIR never inherits its parent's directory.
METRICS_MULTIPROC_DIR = env.str("METRICS_MULTIPROC_DIR", default=str(VAR_DIR / "prometheus"))
os.makedirs(METRICS_MULTIPROC_DIR, exist_ok=True)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = METRICS_MULTIPROC_DIR

# --- Domain settings ------------------------------------------------------------------------
CALLBACK_URL_ALLOW_PRIVATE = env.bool("CALLBACK_URL_ALLOW_PRIVATE", default=False)
# Payouts: providers per mode, dispatch and requery timing (see payouts/services.py).
PAYOUT_PROVIDER_BY_MODE = {
    "test": env.str("PAYOUT_PROVIDER_TEST", default="sandbox"),
    "live": env.str("PAYOUT_PROVIDER_LIVE", default="paystack"),
}
PAYOUT_PROVIDER_TIMEOUT_SECONDS = env.float("PAYOUT_PROVIDER_TIMEOUT_SECONDS", default=30.0)
# Routing: the providers a payout fails over to, in order, after the mode's provider, when no
# PayoutRoute matches it (a failover happens only when a send certainly moved no money).
PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {
    "test": env.list("PAYOUT_FAILOVER_PROVIDERS_TEST", default=["sandbox-b"]),
    "live": env.list("PAYOUT_FAILOVER_PROVIDERS_LIVE", default=[]),
}
# Circuit breaker of each payout provider, from its attempts of the last window.
PAYOUT_CIRCUIT_WINDOW = timedelta(seconds=env.int("PAYOUT_CIRCUIT_WINDOW_SECONDS", default=300))
PAYOUT_CIRCUIT_MIN_ATTEMPTS = env.int("PAYOUT_CIRCUIT_MIN_ATTEMPTS", default=10)
PAYOUT_CIRCUIT_FAILURE_RATE = env.float("PAYOUT_CIRCUIT_FAILURE_RATE", default=0.5)
PAYOUT_CIRCUIT_COOLDOWN = timedelta(seconds=env.int("PAYOUT_CIRCUIT_COOLDOWN_SECONDS", default=60))
# How late a sandbox provider switched ``slow`` answers (at most 5 seconds).
PAYOUT_SANDBOX_SLOW_SECONDS = min(env.float("PAYOUT_SANDBOX_SLOW_SECONDS", default=3.0), 5.0)
# A payout returned by the beneficiary's bank after success gives back its principal; its fee
# too only when this is on (the transfer was made, so by default the fee is kept).
PAYOUT_RETURN_REFUNDS_FEE = env.bool("PAYOUT_RETURN_REFUNDS_FEE", default=False)
# The requery schedule of a dispatched or ambiguous payout (payouts/services/timing.py): the
# delay before each requery, the last repeating; the first is jittered up to
# PAYOUT_REQUERY_FIRST_JITTER; unresolved past PAYOUT_REQUERY_ESCALATE_AFTER it is escalated.
PAYOUT_REQUERY_SCHEDULE = [
    timedelta(seconds=step)
    for step in env.list(
        "PAYOUT_REQUERY_SCHEDULE_SECONDS", cast=int, default=[60, 180, 600, 1800, 3600]
    )
]
if not PAYOUT_REQUERY_SCHEDULE or min(PAYOUT_REQUERY_SCHEDULE) <= timedelta(0):
    raise ImproperlyConfigured("PAYOUT_REQUERY_SCHEDULE_SECONDS must be positive delays.")
PAYOUT_REQUERY_FIRST_JITTER = timedelta(
    seconds=env.int("PAYOUT_REQUERY_FIRST_JITTER_SECONDS", default=30)
)
PAYOUT_REQUERY_ESCALATE_AFTER = timedelta(
    seconds=env.int("PAYOUT_REQUERY_ESCALATE_AFTER_SECONDS", default=24 * 3600)
)
PAYOUT_DISPATCH_STUCK_AFTER = timedelta(
    seconds=env.int("PAYOUT_DISPATCH_STUCK_AFTER_SECONDS", default=120)
)
PAYOUT_DISPATCH_CLAIM_TIMEOUT = timedelta(
    seconds=env.int("PAYOUT_DISPATCH_CLAIM_TIMEOUT_SECONDS", default=180)
)
# Dispatch in rounds: a create's commit wakes the round task (one run per wake interval, shared
# by every process through a Redis cache); beat runs it too, so a publish lost to a broker
# outage only delays dispatch.
PAYOUT_DISPATCH_ROUND_SIZE = env.int("PAYOUT_DISPATCH_ROUND_SIZE", default=50)
if PAYOUT_DISPATCH_ROUND_SIZE < 1:
    raise ImproperlyConfigured("PAYOUT_DISPATCH_ROUND_SIZE must be 1 or more.")
PAYOUT_DISPATCH_WAKE_INTERVAL_MS = env.int("PAYOUT_DISPATCH_WAKE_INTERVAL_MS", default=100)
if PAYOUT_DISPATCH_WAKE_INTERVAL_MS < 0:
    raise ImproperlyConfigured("PAYOUT_DISPATCH_WAKE_INTERVAL_MS must be 0 or more.")
CELERY_BEAT_SCHEDULE["payouts-dispatch-round"] = {
    "task": "payouts.tasks.payouts_dispatch_round_task",
    "schedule": timedelta(seconds=env.int("PAYOUT_DISPATCH_ROUND_SECONDS", default=5)),
}
CELERY_BEAT_SCHEDULE["payouts-requery-ambiguous"] = {
    "task": "payouts.tasks.payouts_requery_due_task",
    # Often enough for the schedule's first step (60-90 s): due payouts wait at most this long.
    "schedule": timedelta(seconds=env.int("PAYOUT_REQUERY_SWEEP_SECONDS", default=10)),
}
CELERY_BEAT_SCHEDULE["payouts-dispatch-stuck"] = {
    "task": "payouts.tasks.payouts_dispatch_stuck_task",
    "schedule": timedelta(seconds=env.int("PAYOUT_DISPATCH_SWEEP_SECONDS", default=60)),
}
# The merchant's payout controls: a payout awaiting approval longer than this is cancelled
# (beat checks every PAYOUT_APPROVAL_SWEEP_SECONDS); a payout is scheduled at most this far ahead.
PAYOUT_APPROVAL_EXPIRES_AFTER = timedelta(
    seconds=env.int("PAYOUT_APPROVAL_EXPIRES_AFTER_SECONDS", default=24 * 3600)
)
PAYOUT_SCHEDULE_MAX_AHEAD = timedelta(days=env.int("PAYOUT_SCHEDULE_MAX_AHEAD_DAYS", default=30))
CELERY_BEAT_SCHEDULE["payouts-approval-expiry"] = {
    "task": "payouts.tasks.payouts_approval_expire_task",
    "schedule": timedelta(seconds=env.int("PAYOUT_APPROVAL_SWEEP_SECONDS", default=60)),
}
# The payout list's per-day counts: on PostgreSQL every payout write appends a count change;
# beat folds them in this often, so a total sums few (it is exact whenever it runs).
CELERY_BEAT_SCHEDULE["payouts-counts-fold"] = {
    "task": "payouts.tasks.payout_counts_fold_task",
    "schedule": timedelta(seconds=env.int("PAYOUT_COUNTS_FOLD_SECONDS", default=10)),
}
# Collections: pending transactions expire after this many hours (beat sweep every 5 minutes).
COLLECTION_TRANSACTION_EXPIRY_HOURS = env.int("COLLECTION_TRANSACTION_EXPIRY_HOURS", default=24)
COLLECTION_VIRTUAL_ACCOUNT_BANK_NAME = env.str(
    "COLLECTION_VIRTUAL_ACCOUNT_BANK_NAME", default="Sandbox Collections Bank"
)
# Collections: how many cards a customer may try on the hosted checkout. A declined card leaves
# the transaction pending while no_of_attempts is below the limit; the decline that reaches it
# fails the transaction.
COLLECTION_CARD_ATTEMPT_LIMIT = env.int("COLLECTION_CARD_ATTEMPT_LIMIT", default=3)
if COLLECTION_CARD_ATTEMPT_LIMIT < 1:
    raise ImproperlyConfigured("COLLECTION_CARD_ATTEMPT_LIMIT must be 1 or more.")
CELERY_BEAT_SCHEDULE["collections-expire-transactions"] = {
    "task": "collections_app.tasks.transactions_expire_task",
    "schedule": timedelta(minutes=5),
}
# Collections: who takes the payment per mode ("sandbox": the hosted checkout's test forms;
# "paystack": Paystack's transaction/initialize and verify, confirmed by its signed webhook).
COLLECTION_PROVIDER_BY_MODE = {
    "test": env.str("COLLECTION_PROVIDER_TEST", default="sandbox"),
    "live": env.str("COLLECTION_PROVIDER_LIVE", default="paystack"),
}
# Refunds of paid collections (docs/refunds.md). Our collection fee stays ours unless this is
# on; then each refund gives back the fee's share of the amount it refunds.
COLLECTION_REFUND_RETURNS_FEE = env.bool("COLLECTION_REFUND_RETURNS_FEE", default=False)
# Who carries a refund per mode ("sandbox": the test-mode provider, outcomes by magic amounts;
# "paystack": POST /refund, GET /refund/:id).
REFUND_PROVIDER_BY_MODE = {
    "test": env.str("REFUND_PROVIDER_TEST", default="sandbox"),
    "live": env.str("REFUND_PROVIDER_LIVE", default="paystack"),
}
# A pending refund is checked again after REFUND_REQUERY_BASE_SECONDS, doubling each time up
# to REFUND_REQUERY_MAX_SECONDS; one being sent holds its claim for REFUND_SEND_LEASE_SECONDS.
REFUND_REQUERY_BASE_SECONDS = env.int("REFUND_REQUERY_BASE_SECONDS", default=60)
REFUND_REQUERY_MAX_SECONDS = env.int("REFUND_REQUERY_MAX_SECONDS", default=6 * 3600)
REFUND_SEND_LEASE_SECONDS = env.int("REFUND_SEND_LEASE_SECONDS", default=120)
CELERY_BEAT_SCHEDULE["refunds-check-due"] = {
    "task": "refunds.tasks.refunds_check_due_task",
    "schedule": timedelta(seconds=env.int("REFUND_SWEEP_SECONDS", default=60)),
}
# Settlements (docs/configuration.md): paid collections settle into the merchant's wallet. Test
# mode settles at once (every run); live mode settles a collection paid on Lagos day D on the
# first business day after D (Monday to Friday, not one of SETTLEMENT_HOLIDAYS, ISO dates) at or
# after SETTLEMENT_LIVE_HOUR (Lagos). Beat looks for due merchants every SETTLEMENT_RUN_SECONDS.
SETTLEMENT_LIVE_HOUR = env.int("SETTLEMENT_LIVE_HOUR", default=9)
if not 0 <= SETTLEMENT_LIVE_HOUR <= 23:
    raise ImproperlyConfigured("SETTLEMENT_LIVE_HOUR must be an hour from 0 to 23.")
SETTLEMENT_HOLIDAYS = env.list("SETTLEMENT_HOLIDAYS", default=[])
for _holiday in SETTLEMENT_HOLIDAYS:
    try:
        date.fromisoformat(_holiday)
    except ValueError as _error:
        raise ImproperlyConfigured(
            f"SETTLEMENT_HOLIDAYS: {_holiday!r} is not an ISO date (YYYY-MM-DD)."
        ) from _error
SETTLEMENT_RUN_SECONDS = env.int("SETTLEMENT_RUN_SECONDS", default=300)
# Subaccount shares: the sweeper creates the payout of any share still without one this long
# after its settlement (the payout task enqueued on commit was lost), every
# SETTLEMENT_SHARE_SWEEP_SECONDS.
SETTLEMENT_SHARE_PAYOUT_AFTER_SECONDS = env.int(
    "SETTLEMENT_SHARE_PAYOUT_AFTER_SECONDS", default=120
)
SETTLEMENT_SHARE_SWEEP_SECONDS = env.int("SETTLEMENT_SHARE_SWEEP_SECONDS", default=300)
# The merchant that owns the platform's wallets (created on first use; no keys).
PLATFORM_MERCHANT_NAME = env.str("PLATFORM_MERCHANT_NAME", default="Platform (internal)")
PLATFORM_MERCHANT_EMAIL = env.str("PLATFORM_MERCHANT_EMAIL", default="platform@example.invalid")
CELERY_BEAT_SCHEDULE["settlements-run-due"] = {
    "task": "settlements.tasks.settlements_run_due_task",
    "schedule": timedelta(seconds=SETTLEMENT_RUN_SECONDS),
}
CELERY_BEAT_SCHEDULE["settlements-share-payouts-sweep"] = {
    "task": "settlements.tasks.settlement_shares_sweep_task",
    "schedule": timedelta(seconds=SETTLEMENT_SHARE_SWEEP_SECONDS),
}
# Events: signed POSTs to the callback URL and the merchant's webhook URL, retried for 72 h.
WEBHOOK_CONNECT_TIMEOUT_SECONDS = env.float("WEBHOOK_CONNECT_TIMEOUT_SECONDS", default=3.0)
WEBHOOK_READ_TIMEOUT_SECONDS = env.float("WEBHOOK_READ_TIMEOUT_SECONDS", default=5.0)
WEBHOOK_RETRY_DELAYS_SECONDS = env.list(
    "WEBHOOK_RETRY_DELAYS_SECONDS",
    cast=int,
    default=[30, 120, 600, 1800, 3600, 7200, 14400, 28800],
)
WEBHOOK_RETRY_JITTER = env.float("WEBHOOK_RETRY_JITTER", default=0.2)
WEBHOOK_RETRY_WINDOW_HOURS = env.int("WEBHOOK_RETRY_WINDOW_HOURS", default=72)
# One attempt, connect + send + every read, ends by this wall-clock deadline (a timeout).
WEBHOOK_DELIVERY_DEADLINE_SECONDS = env.float("WEBHOOK_DELIVERY_DEADLINE_SECONDS", default=10.0)
if WEBHOOK_DELIVERY_DEADLINE_SECONDS <= 0:
    raise ImproperlyConfigured("WEBHOOK_DELIVERY_DEADLINE_SECONDS must be more than 0.")
# The send task's Celery limits: a soft one past the deadline, a hard one past that.
WEBHOOK_TASK_SOFT_TIME_LIMIT_SECONDS = int(WEBHOOK_DELIVERY_DEADLINE_SECONDS) + 15
WEBHOOK_TASK_TIME_LIMIT_SECONDS = WEBHOOK_TASK_SOFT_TIME_LIMIT_SECONDS + 15
WEBHOOK_DELIVERY_CLAIM_SECONDS = env.int("WEBHOOK_DELIVERY_CLAIM_SECONDS", default=60)
if WEBHOOK_DELIVERY_CLAIM_SECONDS <= WEBHOOK_TASK_TIME_LIMIT_SECONDS:
    raise ImproperlyConfigured(
        "WEBHOOK_DELIVERY_CLAIM_SECONDS must exceed the send task's hard time limit "
        f"({WEBHOOK_TASK_TIME_LIMIT_SECONDS} s with this WEBHOOK_DELIVERY_DEADLINE_SECONDS), so "
        "a claim outlives any send that holds it."
    )
# A merchant has at most this many attempts in flight (claimed, lease not over); a further due
# delivery of theirs is deferred by about WEBHOOK_DELIVERY_DEFER_SECONDS (not sent, not an
# attempt). Keep it below the webhooks worker's concurrency (WEBHOOK_WORKER_CONCURRENCY, 4).
WEBHOOK_MERCHANT_MAX_IN_FLIGHT = env.int("WEBHOOK_MERCHANT_MAX_IN_FLIGHT", default=2)
if WEBHOOK_MERCHANT_MAX_IN_FLIGHT < 1:
    raise ImproperlyConfigured("WEBHOOK_MERCHANT_MAX_IN_FLIGHT must be 1 or more.")
WEBHOOK_DELIVERY_DEFER_SECONDS = env.float("WEBHOOK_DELIVERY_DEFER_SECONDS", default=5.0)
if WEBHOOK_DELIVERY_DEFER_SECONDS <= 0:
    raise ImproperlyConfigured("WEBHOOK_DELIVERY_DEFER_SECONDS must be more than 0.")
WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS = env.int(
    "WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS", default=240
)
# A rotated webhook secret keeps signing beside the new one for this long (0 to 72 hours),
# unless the rotation gives its own overlap.
WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS = env.int("WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS", default=24)
if not 0 <= WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS <= 72:
    raise ImproperlyConfigured("WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS must be between 0 and 72.")
CELERY_BEAT_SCHEDULE["collections-webhook-deliveries-due"] = {
    "task": "webhooks.tasks.webhook_deliveries_sweep_task",
    "schedule": timedelta(seconds=env.int("WEBHOOK_SWEEP_SECONDS", default=30)),
}
# Wallets: static virtual accounts, funding notifications, bank cache, name enquiry.
WALLET_STATIC_ACCOUNT_BANK_NAME = env.str("WALLET_STATIC_ACCOUNT_BANK_NAME", default="Wema Bank")
WALLET_SANDBOX_STATIC_ACCOUNT_BANK_NAME = env.str(
    "WALLET_SANDBOX_STATIC_ACCOUNT_BANK_NAME", default="Sandbox Test Bank"
)
DEFAULT_FUNDING_WEBHOOK_SECRET = "dev-funding-webhook-secret-change-me"  # noqa: S105
FUNDING_WEBHOOK_SECRET = env.str("FUNDING_WEBHOOK_SECRET", default=DEFAULT_FUNDING_WEBHOOK_SECRET)
FUNDING_WEBHOOK_SIGNATURE_HEADER = env.str(
    "FUNDING_WEBHOOK_SIGNATURE_HEADER", default="X-Provider-Signature"
)
BANK_LIST_CACHE_SECONDS = env.int("BANK_LIST_CACHE_SECONDS", default=300)
# Banks and fee tiers are also kept in each process for this long (0 turns that off).
REFERENCE_DATA_LOCAL_SECONDS = env.float("REFERENCE_DATA_LOCAL_SECONDS", default=5.0)
PAYSTACK_BASE_URL = env.str("PAYSTACK_BASE_URL", default="https://api.paystack.co").rstrip("/")
PAYSTACK_SECRET_KEY = env.str("PAYSTACK_SECRET_KEY", default="")
PAYSTACK_TIMEOUT_SECONDS = env.float("PAYSTACK_TIMEOUT_SECONDS", default=5.0)
# Flutterwave (a live payout provider: PAYOUT_PROVIDER_LIVE=flutterwave). The webhook hash is the
# "secret hash" set in Flutterwave's dashboard, sent back in each webhook's verif-hash header.
FLUTTERWAVE_BASE_URL = env.str(
    "FLUTTERWAVE_BASE_URL", default="https://api.flutterwave.com/v3"
).rstrip("/")
FLUTTERWAVE_SECRET_KEY = env.str("FLUTTERWAVE_SECRET_KEY", default="")
FLUTTERWAVE_TIMEOUT_SECONDS = env.float("FLUTTERWAVE_TIMEOUT_SECONDS", default=10.0)
FLUTTERWAVE_WEBHOOK_HASH = env.str("FLUTTERWAVE_WEBHOOK_HASH", default="")
NAME_ENQUIRY_PROVIDERS = {
    "test": env.str(
        "NAME_ENQUIRY_PROVIDER_TEST", default="wallets.providers.sandbox.SandboxNameEnquiryProvider"
    ),
    "live": env.str(
        "NAME_ENQUIRY_PROVIDER_LIVE",
        default="wallets.providers.paystack.PaystackNameEnquiryProvider",
    ),
}
# Sweeps: a new settlement account takes effect this many hours after it is set (announced at
# once by settlement_account.changed); beat makes the due sweeps this often.
SWEEP_ACCOUNT_COOLING_OFF_HOURS = env.int("SWEEP_ACCOUNT_COOLING_OFF_HOURS", default=24)
if SWEEP_ACCOUNT_COOLING_OFF_HOURS < 0:
    raise ImproperlyConfigured("SWEEP_ACCOUNT_COOLING_OFF_HOURS must be 0 or more.")
CELERY_BEAT_SCHEDULE["sweeps-run-due"] = {
    "task": "sweeps.tasks.sweep_run_due_task",
    "schedule": timedelta(seconds=env.int("SWEEP_RUN_SECONDS", default=60)),
}
