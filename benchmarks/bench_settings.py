"""Production settings plus one benchmark-only route, ``POST /bench/noop``.

The no-op route gives the framework's share of a create (M4): same gunicorn, middleware,
authentication, throttling, JSON parsing and envelope rendering, and no domain work. It exists
only under these settings; the product's URLconf never includes it.
"""

from config.settings.production import *  # noqa: F403

ROOT_URLCONF = "benchmarks.bench_urls"
