"""Local development: DEBUG on unless the environment says otherwise; with DEBUG off the same
start-up checks as production apply.

With DEBUG on, callback and webhook URLs may also be ``http`` on loopback and private hosts (a
merchant's own server on ``http://localhost:3000``), unless ``CALLBACK_URL_ALLOW_PRIVATE=0``;
with DEBUG off, and in production, only public ``https`` URLs are accepted."""

import os

os.environ.setdefault("DEBUG", "1")

from config.settings.base import *  # noqa: E402,F403
from config.settings.base import DEBUG, env  # noqa: E402
from config.settings.deployment import deployment_settings_check  # noqa: E402

CALLBACK_URL_ALLOW_PRIVATE = env.bool("CALLBACK_URL_ALLOW_PRIVATE", default=DEBUG)

if not DEBUG:
    deployment_settings_check(globals())
