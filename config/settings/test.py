"""Test settings: the database comes from DATABASE_URL (PostgreSQL in CI), never eager Celery
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
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not Django's shared in-memory database: threads in the concurrency tests then
    # meet the same WAL file and IMMEDIATE transactions as the embedded default does.
    from config.settings.base import VAR_DIR  # noqa: E402

    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}

# The admin login lockout (django-axes) is off here; tests/core/test_admin_login_throttle.py
# turns it on.
AXES_ENABLED = False
