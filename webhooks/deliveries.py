"""Delivery of events to the merchant's URLs: signed POSTs, retried with backoff for 72 hours.

* Each event goes to the transaction's ``callback_url`` and to the merchant's webhook URL for
  the mode (``merchants.WebhookSettings``; skipped when none, and sent once when both are the
  same URL). Each (event, URL) pair is a ``WebhookDelivery``: one attempt chain.
* The body is ``Event.body`` byte for byte, on every attempt and every resend. When the merchant
  has a webhook secret for the mode, ``X-Webhook-Signature`` is the lowercase hex
  HMAC-SHA512 of that body keyed with the secret (read at send time, so a rotated secret signs
  the next attempt). Without a secret the header is omitted.
* A 2xx answer ends the chain. A timeout, a connection error, any other status (3xx included:
  redirects are not followed) or a refused URL schedules the next attempt after
  ``WEBHOOK_RETRY_DELAYS_SECONDS`` (30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, then every
  8 h) ± ``WEBHOOK_RETRY_JITTER``; once the next attempt would fall after the retry window
  (``WEBHOOK_RETRY_WINDOW_HOURS``, 72 h from the chain's creation) the chain is ``failed``.
* The URL is checked against the SSRF rules again at send time (DNS resolved then, honouring
  ``CALLBACK_URL_ALLOW_PRIVATE``) and the connection goes to the address that was checked, so
  a name that now resolves to a private address is refused and never contacted.
* Sending claims the delivery first (``next_attempt_at`` moves ``WEBHOOK_DELIVERY_CLAIM_SECONDS``
  ahead under a row lock, never past ``give_up_at``), so duplicate tasks never send the same
  attempt twice and a worker lost mid-send is retried by the sweeper once the claim runs out.
* ``give_up_at`` is final: from that instant nothing more is sent. A delivery still pending
  then (its attempts could not be recorded, its claims kept running out, or its last attempt
  was not started in time) ends ``failed``, by the next claim or by the sweeper.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from requests.adapters import HTTPAdapter

from core.exceptions import ConflictError
from core.signing import hmac_sha512_hex_compute
from core.ssrf import UnsafeURLError, url_check_public
from merchants.models import WebhookSettings
from webhooks import tasks
from webhooks.models import (
    DeliveryStatus,
    DeliveryTarget,
    Event,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Webhook-Signature"
USER_AGENT = "MerchantPayments-Webhooks/1.0"
RESPONSE_EXCERPT_CHARS = 500
RESPONSE_READ_BYTES = 2048
ERROR_MAX_CHARS = 255
GAVE_UP_ERROR = "retry window ended: no further attempt"

_random = secrets.SystemRandom()


# --- signature and schedule ---------------------------------------------------------------------


def webhook_signature_compute(body: bytes, *, secret: str) -> str:
    """Lowercase hex HMAC-SHA512 of the raw body, keyed with the merchant's webhook secret."""
    return hmac_sha512_hex_compute(body, secret=secret)


def retry_delay_seconds(*, failed_attempts: int, jitter: float | None = None) -> float:
    """Seconds to wait after the ``failed_attempts``-th failed attempt of a chain: the
    configured delay for that attempt (the last one repeats), spread by ± ``jitter``."""
    delays = settings.WEBHOOK_RETRY_DELAYS_SECONDS
    base = float(delays[min(max(failed_attempts, 1), len(delays)) - 1])
    spread = settings.WEBHOOK_RETRY_JITTER if jitter is None else jitter
    return base * _random.uniform(1 - spread, 1 + spread)


def _retry_window() -> timedelta:
    return timedelta(hours=settings.WEBHOOK_RETRY_WINDOW_HOURS)


# --- creating chains ---------------------------------------------------------------------------


def _webhook_url(*, merchant_id: int, mode: str) -> str:
    # The URL only: the secret (encrypted at rest) is decrypted at send time, never here.
    url = (
        WebhookSettings.objects.filter(merchant_id=merchant_id, mode=mode)
        .values_list("url", flat=True)
        .first()
    )
    return url or ""


def _targets(*, callback_url: str | None, webhook_url: str) -> list[tuple[str, str]]:
    """An event's destinations: the callback URL (if any) and the merchant's webhook URL for
    the event's mode (if configured), the same URL twice only once."""
    targets: list[tuple[str, str]] = []
    if callback_url:
        targets.append((DeliveryTarget.CALLBACK_URL, callback_url))
    if webhook_url and webhook_url != callback_url:
        targets.append((DeliveryTarget.WEBHOOK_URL, webhook_url))
    return targets


def _chains_create(
    *,
    event: Event,
    targets: Iterable[tuple[str, str]],
    now: datetime,
    resend_of: dict[str, WebhookDelivery] | None = None,
) -> list:
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            event=event,
            target=target,
            url=url,
            next_attempt_at=now,
            give_up_at=now + _retry_window(),
            resend_of=(resend_of or {}).get(target),
            created_at=now,
        )
        for target, url in targets
    )
    ids = [delivery.pk for delivery in deliveries]
    if ids:
        transaction.on_commit(lambda: webhook_deliveries_enqueue(delivery_ids=ids), robust=True)
    return deliveries


def webhook_deliveries_create(
    *, event: Event, callback_url: str | None = None
) -> list[WebhookDelivery]:
    """One chain per distinct destination: the callback URL (if any) and the merchant's webhook
    URL for the event's mode (if configured). Enqueued when the database transaction commits."""
    webhook_url = _webhook_url(merchant_id=event.merchant_id, mode=event.mode)
    targets = _targets(callback_url=callback_url, webhook_url=webhook_url)
    return _chains_create(event=event, targets=targets, now=event.created_at)


def webhook_deliveries_create_each(*, events: Sequence[Event]) -> list[WebhookDelivery]:
    """``webhook_deliveries_create`` (no callback URL) for many events at once: one read of the
    webhook URLs of their merchants and modes, one insert of every chain, one enqueue when the
    database transaction commits."""
    if not events:
        return []
    merchant_ids = {event.merchant_id for event in events}
    urls = {
        (merchant_id, mode): url
        for merchant_id, mode, url in WebhookSettings.objects.filter(
            merchant_id__in=merchant_ids
        ).values_list("merchant_id", "mode", "url")
    }
    chains = [
        WebhookDelivery(
            event=event,
            target=target,
            url=url,
            next_attempt_at=event.created_at,
            give_up_at=event.created_at + _retry_window(),
            created_at=event.created_at,
        )
        for event in events
        for target, url in _targets(
            callback_url=None, webhook_url=urls.get((event.merchant_id, event.mode), "")
        )
    ]
    deliveries = WebhookDelivery.objects.bulk_create(chains)
    ids = [delivery.pk for delivery in deliveries]
    if ids:
        transaction.on_commit(lambda: webhook_deliveries_enqueue(delivery_ids=ids), robust=True)
    return deliveries


def webhook_deliveries_enqueue(*, delivery_ids: Iterable[int]) -> None:
    for delivery_id in delivery_ids:
        tasks.webhook_delivery_send_task.delay(delivery_id)


@transaction.atomic
def webhook_delivery_resend(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """A new attempt chain to the same URL with the same event (same id, same bytes)."""
    now = timezone.now()
    resent = WebhookDelivery.objects.create(
        event_id=delivery.event_id,
        target=delivery.target,
        url=delivery.url,
        next_attempt_at=now,
        give_up_at=now + _retry_window(),
        resend_of=delivery,
        created_at=now,
    )
    resent_id = resent.pk
    transaction.on_commit(lambda: webhook_deliveries_enqueue(delivery_ids=[resent_id]), robust=True)
    return resent


@transaction.atomic
def event_resend(*, event: Event) -> list[WebhookDelivery]:
    """Resends the event to every URL it was delivered to (new chains, same bytes); an event
    that had no destination goes to the current ones (callback URL, webhook URL)."""
    latest: dict[tuple[str, str], WebhookDelivery] = {}
    for delivery in event.deliveries.order_by("created_at", "id"):
        latest[(delivery.target, delivery.url)] = delivery
    if latest:
        return [webhook_delivery_resend(delivery=delivery) for delivery in latest.values()]
    callback_url = event.transaction.callback_url if event.transaction_id else None
    webhook_url = _webhook_url(merchant_id=event.merchant_id, mode=event.mode)
    targets = _targets(callback_url=callback_url, webhook_url=webhook_url)
    return _chains_create(event=event, targets=targets, now=timezone.now())


@transaction.atomic
def event_resend_to_current_urls(*, event: Event) -> list[WebhookDelivery]:
    """The merchant's own resend (``POST /api/v1/events/{id}/resend``): new chains with the same
    event id and bytes to the event's destinations as they are *now*, the transaction's callback
    URL (if any) and the merchant's current webhook URL for the mode, so a merchant who fixed or
    moved their endpoint receives the event there and never at a URL they have left (the admin's
    :func:`event_resend` repeats the URLs used before). Each chain points (``resend_of``) at the
    latest earlier chain to the same target. Enqueued when the database transaction commits.

    Raises ``ConflictError`` (409) when the merchant has no webhook URL for the event's mode.
    """
    webhook_url = _webhook_url(merchant_id=event.merchant_id, mode=event.mode)
    if not webhook_url:
        raise ConflictError(
            f"No webhook URL is configured for {event.mode} mode: set one in your webhook "
            "settings, then resend the event"
        )
    latest: dict[str, WebhookDelivery] = {}
    for delivery in event.deliveries.order_by("created_at", "id"):
        latest[delivery.target] = delivery
    callback_url = event.transaction.callback_url if event.transaction_id else None
    targets = _targets(callback_url=callback_url, webhook_url=webhook_url)
    return _chains_create(event=event, targets=targets, now=timezone.now(), resend_of=latest)


# --- sending -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PostResult:
    status_code: int | None = None
    latency_ms: int | None = None
    response_excerpt: str = ""
    error: str = ""
    sent: bool = True

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class _PinnedAddressAdapter(HTTPAdapter):
    """Connects to the address the SSRF check approved instead of resolving the name again
    (closing the DNS-rebinding window); TLS still uses and verifies the URL's host name."""

    def __init__(self, *, address: str, host: str) -> None:
        self._address = address
        self._host = host
        super().__init__(max_retries=0)

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        host_params["host"] = self._address
        if host_params.get("scheme") == "https":
            pool_kwargs["server_hostname"] = self._host
            pool_kwargs["assert_hostname"] = self._host
        return host_params, pool_kwargs


def _storable(text: str) -> str:
    """Text a receiver controls, made storable on every backend: PostgreSQL refuses NUL in a
    text column and no backend stores a lone surrogate; both become U+FFFD."""
    text = text.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")
    return text.replace("\x00", "\ufffd")


def _error_text(prefix: str, error: Exception) -> str:
    return _storable(f"{prefix}: {error}")[:ERROR_MAX_CHARS]


def webhook_post(*, url: str, body: bytes, headers: dict[str, str]) -> PostResult:
    """POSTs ``body`` to ``url`` once: SSRF check first (refused → nothing sent), no redirects,
    short timeouts, no proxies from the environment. Never raises for network trouble."""
    try:
        checked = url_check_public(url)
    except UnsafeURLError as error:
        return PostResult(error=_error_text("refused by the SSRF check", error), sent=False)
    request_headers = {**headers, "Host": urlsplit(url).netloc}
    session = requests.Session()
    session.trust_env = False
    session.mount(
        f"{checked.scheme}://",
        _PinnedAddressAdapter(address=checked.addresses[0], host=checked.host),
    )
    started = time.monotonic()
    try:
        with session.post(
            url,
            data=body,
            headers=request_headers,
            timeout=(
                settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS,
                settings.WEBHOOK_READ_TIMEOUT_SECONDS,
            ),
            allow_redirects=False,
            stream=True,
        ) as response:
            latency_ms = int((time.monotonic() - started) * 1000)
            try:
                raw = response.raw.read(RESPONSE_READ_BYTES, decode_content=True) or b""
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError):
                raw = b""  # a body cut short or badly encoded: the status still counts
            excerpt = _storable(raw.decode("utf-8", errors="replace"))[:RESPONSE_EXCERPT_CHARS]
            return PostResult(
                status_code=response.status_code, latency_ms=latency_ms, response_excerpt=excerpt
            )
    except requests.Timeout as error:
        return PostResult(
            latency_ms=int((time.monotonic() - started) * 1000), error=_error_text("timeout", error)
        )
    except requests.ConnectionError as error:
        return PostResult(
            latency_ms=int((time.monotonic() - started) * 1000),
            error=_error_text("connection error", error),
        )
    except requests.RequestException as error:
        return PostResult(error=_error_text("request error", error))
    finally:
        session.close()


def webhook_headers(*, event: Event, secret: str) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Webhook-Event": event.event_type,
        "X-Webhook-Event-Id": event.event_id,
    }
    if secret:
        headers[SIGNATURE_HEADER] = webhook_signature_compute(event.body_bytes, secret=secret)
    return headers


@dataclass(frozen=True)
class DeliveryAttemptResult:
    delivery: WebhookDelivery
    attempt: WebhookDeliveryAttempt


def _delivery_give_up(*, delivery: WebhookDelivery) -> None:
    delivery.status = DeliveryStatus.FAILED
    delivery.next_attempt_at = None
    delivery.last_error = GAVE_UP_ERROR
    delivery.save(update_fields=["status", "next_attempt_at", "last_error", "updated_at"])
    logger.warning(
        "delivery %s of event %s failed: retry window ended after %s recorded attempt(s)",
        delivery.pk,
        delivery.event_id,
        delivery.attempt_count,
    )


@transaction.atomic
def _delivery_claim(*, delivery_id: int, now: datetime) -> WebhookDelivery | None:
    """The due pending delivery, leased to this sender until the claim time runs out or
    ``give_up_at`` comes, whichever is first; ``None`` when not due or taken. Past
    ``give_up_at`` nothing is claimed: the delivery ends ``failed``."""
    delivery = (
        WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("event")
        .filter(pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .first()
    )
    if delivery is None:
        return None
    if now >= delivery.give_up_at:
        _delivery_give_up(delivery=delivery)
        return None
    lease_end = now + timedelta(seconds=settings.WEBHOOK_DELIVERY_CLAIM_SECONDS)
    delivery.next_attempt_at = min(lease_end, delivery.give_up_at)
    delivery.save(update_fields=["next_attempt_at", "updated_at"])
    return delivery


@transaction.atomic
def _attempt_record(
    *, delivery_id: int, result: PostResult, now: datetime
) -> DeliveryAttemptResult:
    delivery = WebhookDelivery.objects.select_for_update().get(pk=delivery_id)
    number = delivery.attempt_count + 1
    next_attempt_at: datetime | None = None
    if result.succeeded:
        delivery.status = DeliveryStatus.SUCCEEDED
        delivery.delivered_at = now
    else:
        candidate = now + timedelta(seconds=retry_delay_seconds(failed_attempts=number))
        if candidate >= delivery.give_up_at:
            delivery.status = DeliveryStatus.FAILED
        else:
            next_attempt_at = candidate
    delivery.attempt_count = number
    delivery.next_attempt_at = next_attempt_at
    delivery.last_status_code = result.status_code
    delivery.last_error = result.error
    delivery.save()
    attempt = WebhookDeliveryAttempt.objects.create(
        delivery=delivery,
        attempt_number=number,
        url=delivery.url,
        status_code=result.status_code,
        latency_ms=result.latency_ms,
        response_excerpt=result.response_excerpt,
        error=result.error,
        succeeded=result.succeeded,
        next_attempt_at=next_attempt_at,
        created_at=now,
    )
    return DeliveryAttemptResult(delivery=delivery, attempt=attempt)


def webhook_delivery_attempt(
    *, delivery_id: int, now: datetime | None = None
) -> DeliveryAttemptResult | None:
    """Makes the due attempt of a pending delivery and records it; ``None`` when the delivery
    is not due (already delivered, given up, scheduled later or being sent by someone else)."""
    claimed = _delivery_claim(delivery_id=delivery_id, now=now or timezone.now())
    if claimed is None:
        return None
    event = claimed.event
    secret_row = WebhookSettings.objects.filter(
        merchant_id=event.merchant_id, mode=event.mode
    ).first()
    secret = secret_row.secret if secret_row is not None else ""
    result = webhook_post(
        url=claimed.url, body=event.body_bytes, headers=webhook_headers(event=event, secret=secret)
    )
    recorded = _attempt_record(delivery_id=claimed.pk, result=result, now=now or timezone.now())
    delivery = recorded.delivery
    log = logger.info if result.succeeded else logger.warning
    log(
        "event %s to %s: attempt %s %s (%s)",
        event.event_id,
        delivery.target,
        recorded.attempt.attempt_number,
        "delivered" if result.succeeded else delivery.status,
        result.status_code or result.error,
    )
    return recorded


def webhook_deliveries_due_ids(*, now: datetime | None = None, limit: int = 500) -> list[int]:
    now = now or timezone.now()
    return list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at", "id")
        .values_list("pk", flat=True)[:limit]
    )


def webhook_deliveries_expire(*, now: datetime | None = None) -> int:
    """Ends every pending delivery whose ``give_up_at`` has come: ``failed``, nothing more is
    sent, whatever became of its earlier attempts. Returns how many."""
    now = now or timezone.now()
    expired = WebhookDelivery.objects.filter(
        status=DeliveryStatus.PENDING, give_up_at__lte=now
    ).update(
        status=DeliveryStatus.FAILED, next_attempt_at=None, last_error=GAVE_UP_ERROR, updated_at=now
    )
    if expired:
        logger.warning("%s webhook deliveries failed: retry window ended", expired)
    return expired


def webhook_deliveries_sweep(*, now: datetime | None = None, limit: int = 500) -> int:
    """Fails the deliveries whose retry window has ended, then enqueues every pending delivery
    whose next attempt is due: long backoffs, lost tasks and claims left by a worker that died
    mid-send. Duplicates are harmless (the claim). Returns how many were enqueued."""
    now = now or timezone.now()
    webhook_deliveries_expire(now=now)
    ids = webhook_deliveries_due_ids(now=now, limit=limit)
    webhook_deliveries_enqueue(delivery_ids=ids)
    return len(ids)
