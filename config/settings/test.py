"""Test settings: the database comes from DATABASE_URL (see scripts/test.sh), never eager Celery
in the service; unit tests that need a task body call it directly."""

import os

os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")  # noqa: S105

from config.settings.base import *  # noqa: E402,F403
from config.settings.base import DATABASES  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
DATABASES["default"]["CONN_MAX_AGE"] = 0

# The admin login lockout (django-axes) is off here; tests/core/test_admin_login_throttle.py
# turns it on.
AXES_ENABLED = False

# No failover provider by default: a test's fake provider stands for every provider name, so a
# refusal would be sent to it again. Tests of routing and failover set this themselves.
PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {"test": [], "live": []}
PAYOUT_SANDBOX_SLOW_SECONDS = 0.0
# Each pytest-xdist worker counts its own /metrics: the multiprocess files of one worker's
# requests never show up in another worker's scrape.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _XDIST_WORKER and "METRICS_MULTIPROC_DIR" not in os.environ:
    from config.settings.base import METRICS_MULTIPROC_DIR as _BASE_METRICS_DIR  # noqa: E402

    METRICS_MULTIPROC_DIR = os.path.join(_BASE_METRICS_DIR, _XDIST_WORKER)
    os.makedirs(METRICS_MULTIPROC_DIR, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = METRICS_MULTIPROC_DIR
