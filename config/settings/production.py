"""Production: DEBUG off unless set, a real SECRET_KEY required (enforced in base), the funding
webhook secret and the live provider's key required (``config.settings.deployment``), HTTPS
enforced (redirect and HSTS), and the admin only for staff verified by a TOTP device."""

from config.settings.base import *  # noqa: F403
from config.settings.base import DEBUG, env
from config.settings.deployment import deployment_settings_check

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Plain-HTTP requests are redirected to HTTPS, except the load balancer's health probes.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)

OTP_REQUIRED = env.bool("OTP_REQUIRED", default=True)

if not DEBUG:
    deployment_settings_check(globals())
