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
