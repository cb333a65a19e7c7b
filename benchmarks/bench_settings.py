"""Production settings plus one benchmark-only route, ``POST /bench/noop``.

The no-op route gives the framework's share of a create (M4): same gunicorn, middleware,
authentication, throttling, JSON parsing and envelope rendering, and no domain work. It exists
only under these settings; the product's URLconf never includes it.

``BENCH_TRACE`` (on unless ``0``) puts ``benchmarks.trace.PhaseTraceMiddleware`` first: the
requests that carry ``X-Bench-Trace`` get their phases timed (``benchmarks/trace.py``).
"""

import os

from config.settings.production import *  # noqa: F403
from config.settings.production import MIDDLEWARE

ROOT_URLCONF = "benchmarks.bench_urls"

if os.environ.get("BENCH_TRACE", "1") != "0":
    MIDDLEWARE = ["benchmarks.trace.PhaseTraceMiddleware", *MIDDLEWARE]
