"""Local development: DEBUG on unless the environment says otherwise; with DEBUG off the same
start-up checks as production apply."""

import os

os.environ.setdefault("DEBUG", "1")

from config.settings.base import *  # noqa: E402,F403
from config.settings.base import DEBUG  # noqa: E402
from config.settings.deployment import deployment_settings_check  # noqa: E402

if not DEBUG:
    deployment_settings_check(globals())
