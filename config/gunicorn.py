"""gunicorn settings, from the environment (the Procfile and `make bench` pass ``-c`` this file).

Topology: gunicorn manages ``WEB_CONCURRENCY`` processes; each runs ``config.web.WebWorker``,
uvicorn's event loop in front of the WSGI application, with ``GUNICORN_THREADS`` threads for
views. The loop reads each request whole (request line, headers, body) before a thread sees
it and parks idle keep-alive connections, so clients that send headers or bodies slowly, or
idle after a request, hold sockets, never the threads that run views: normal requests keep
answering while many such clients stay connected (tests/web/test_slow_clients.py). No
buffering proxy is needed in front for that; TLS and the public address stay with the
platform's load balancer. ``GUNICORN_WORKER_CONNECTIONS`` bounds the connections a process
holds (more are answered 503), ``WEB_REQUEST_BUFFER_MAX_BYTES`` the body it buffers (413).

Measured on the 2-core machine (two processes, one thread each, wrk on 127.0.0.1, shared
load): an authenticated bank-list GET costs 2.5-3.1 ms of web CPU with this worker, 3.0-3.2 ms
with gunicorn's ``gthread`` worker; ``/healthz`` 0.9-1.2 ms against 0.7-0.8 ms (the hand-over
between the loop and the view thread). ``gthread`` parses a request in its thread: two clients
trickling headers held both threads and every other request timed out, as did a kept-alive
client whose unread body arrived after its 404 (the thread then blocks waiting for the next
request). The ``gevent`` worker survived slow clients but cost 2.9 ms and a database
connection per client connection; Django's ASGI handler opened a database connection per
request (60 requests/s); granian's WSGI mode handed slow bodies to its threads.

Logs: the access line holds the client address, method, path, protocol, status, bytes and
milliseconds, and never the query string, the User-Agent, the Referer or the user of a Basic
``Authorization`` header, any of which can carry a key. Access and error logs both pass the
redaction filter (``core.logging``), which also covers a key written into the path.
"""

import os

bind = f"{os.environ.get('BIND_ADDRESS', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "config.web.WebWorker")
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))
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


def post_worker_init(worker: object) -> None:
    """Garbage collection in each web process once the application is loaded.

    ``WEB_GC_FREEZE`` (on unless ``0``): ``gc.freeze()`` moves everything loaded so far (Django,
    the apps, the URLconf, the serializers' classes) to the permanent generation, so the full
    collections that run during requests no longer walk it. ``WEB_GC_GEN0_THRESHOLD`` (7,000;
    0 keeps Python's 700) sets the allocations between young collections. Measured under the
    bench's open-loop creates (benchmarks/trace.py, docs/benchmarks.md): a request's time in
    collections at p99 was 9-62 ms (median 24) without either, 10-32 ms (median 12) with the
    freeze and 4-35 ms (median 7) with both.
    """
    import gc

    if os.environ.get("WEB_GC_FREEZE", "1") != "0":
        gc.collect()
        gc.freeze()
    gen0 = int(os.environ.get("WEB_GC_GEN0_THRESHOLD", "7000") or 0)
    if gen0 > 0:
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(gen0, gen1, gen2)
