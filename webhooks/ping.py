"""The test ping a merchant asks for (``POST /api/v1/webhook-settings/test``): one signed
``ping`` event POSTed at once to the merchant's current webhook URL for the mode, through the
same SSRF-checked, deadline-bounded path and with the same headers and signatures as every
delivery, and answered with what the receiver did.

A ping is sent once, never retried, and not recorded: it is not an event of the merchant's
event list and has no delivery or attempt rows (its id is fresh for every ping).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from django.utils import timezone

from core.exceptions import ConflictError
from merchants.models import Merchant, WebhookSettings
from webhooks.deliveries import webhook_headers
from webhooks.events import event_body_serialize, event_id_generate
from webhooks.posting import PostResult, webhook_post
from webhooks.signing import SigningSecrets

PING_EVENT_TYPE = "ping"
PING_MESSAGE = "A test ping from your webhook settings: no money moved."


@dataclass(frozen=True, kw_only=True)
class PingResult(PostResult):
    """What one ping did, as any post's result (``sent`` is False when the URL was refused
    before any connection, by the SSRF check at send time; ``status_code`` is None without an
    answer), with the ping's id and the URL it went to."""

    event_id: str
    url: str


def webhook_ping_send(*, merchant: Merchant, mode: str, now: datetime | None = None) -> PingResult:
    """Sends the ping to the merchant's webhook URL for ``mode``, signed with the merchant's
    secrets for the mode as deliveries are; waits for the answer (at most
    ``WEBHOOK_DELIVERY_DEADLINE_SECONDS``). 409 when no webhook URL is set for the mode."""
    now = now or timezone.now()
    hooks = WebhookSettings.objects.filter(merchant=merchant, mode=mode).first()
    if hooks is None or not hooks.url:
        raise ConflictError(
            f"No webhook URL is configured for {mode} mode: set one in your webhook settings, "
            "then send the test"
        )
    event_id = event_id_generate()
    body = event_body_serialize(
        event_id=event_id,
        event_type=PING_EVENT_TYPE,
        created_at=now,
        data={"mode": mode, "message": PING_MESSAGE},
    ).encode("utf-8")
    headers = webhook_headers(
        event_id=event_id,
        event_type=PING_EVENT_TYPE,
        body=body,
        secrets=SigningSecrets.of(hooks, now=now),
        sent_at=now,
    )
    result = webhook_post(url=hooks.url, body=body, headers=headers)
    return PingResult(event_id=event_id, url=hooks.url, **asdict(result))
