"""Delivery of events to the merchant's URLs: signed POSTs, retried with backoff for 72 hours.

* Each event goes to the transaction's ``callback_url`` and to the merchant's webhook URL for
  the mode (``merchants.WebhookSettings``; skipped when none, and sent once when both are the
  same URL). Each (event, URL) pair is a ``WebhookDelivery``: one attempt chain.
* A callback-URL chain keeps its URL (it belongs to the transaction). A webhook-URL chain reads
  the merchant's webhook URL for the mode again at every attempt: if the merchant changed it,
  the attempt (and the rest of the chain) goes to the new URL, recorded on the attempt; if the
  merchant removed it, the chain ends ``failed`` ("webhook URL removed by the merchant") and
  nothing more is sent.
* The body is ``Event.body`` byte for byte, on every attempt and every resend. Every attempt
  carries the Standard Webhooks headers (``webhook-id``: the event id; ``webhook-timestamp``:
  the attempt's time; ``webhook-signature``) and the older ``X-Webhook-Signature``, computed by
  ``webhooks.signing`` with the merchant's secrets for the mode as they are at send time (so a
  rotated secret signs the next attempt, and the previous one beside it during the rotation
  overlap). Without a secret the signature headers are omitted.
* One attempt (connect, send, every read) ends by ``WEBHOOK_DELIVERY_DEADLINE_SECONDS`` of wall
  time, however slowly the receiver answers (``webhooks.posting``); an attempt without a status
  line and headers by then is a timeout.
* A 2xx answer ends the chain. A timeout, a connection error, any other status (3xx included:
  redirects are not followed) or a refused URL schedules the next attempt after
  ``WEBHOOK_RETRY_DELAYS_SECONDS`` (30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, then every
  8 h) ± ``WEBHOOK_RETRY_JITTER``; once the next attempt would fall after the retry window
  (``WEBHOOK_RETRY_WINDOW_HOURS``, 72 h from the chain's creation) the chain is ``failed``.
* The URL is checked against the SSRF rules again at send time (DNS resolved then, honouring
  ``CALLBACK_URL_ALLOW_PRIVATE``) and the connection goes to the address that was checked, so
  a name that now resolves to a private address is refused and never contacted.
* Sending claims the delivery first (``next_attempt_at`` and ``claimed_until`` move
  ``WEBHOOK_DELIVERY_CLAIM_SECONDS`` ahead under a row lock, never past ``give_up_at``), so
  duplicate tasks never send the same attempt twice and a worker lost mid-send is retried by the
  sweeper once the claim runs out. The claim time exceeds the send task's hard time limit.
* A merchant has at most ``WEBHOOK_MERCHANT_MAX_IN_FLIGHT`` attempts in flight (deliveries of
  their events claimed, claim not over; counted under a per-merchant transaction advisory
  lock). A due delivery beyond that is deferred: not
  sent, no attempt recorded, its next attempt a few seconds on (longer after each deferral in
  a row), and its task re-enqueued for then. One merchant's slow server thus holds at most that
  many processes of the webhook pool, and the sweeper enqueues due deliveries round-robin across
  merchants, so one merchant's backlog never queues ahead of everyone else's.
* ``give_up_at`` is final: from that instant nothing more is sent. A delivery still pending
  then (its attempts could not be recorded, its claims kept running out, or its last attempt
  was not started in time) ends ``failed``, by the next claim or by the sweeper.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from core.exceptions import ConflictError
from merchants.models import WebhookSettings
from webhooks import tasks
from webhooks.models import (
    DeliveryStatus,
    DeliveryTarget,
    Event,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)
from webhooks.posting import PostResult, webhook_post
from webhooks.signing import SigningSecrets, webhook_signature_headers

logger = logging.getLogger(__name__)

USER_AGENT = "MerchantPayments-Webhooks/1.0"
GAVE_UP_ERROR = "retry window ended: no further attempt"
URL_REMOVED_ERROR = "webhook URL removed by the merchant"
# The advisory-lock namespace of the per-merchant in-flight count (PostgreSQL).
IN_FLIGHT_LOCK_NAMESPACE = 0x5748  # "WH"
# A deferral waits WEBHOOK_DELIVERY_DEFER_SECONDS, doubling with each deferral in a row, up to
# this many doublings.
DEFER_MAX_DOUBLINGS = 4

_random = secrets.SystemRandom()


# --- signature and schedule ---------------------------------------------------------------------


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
    callback_url = event.transaction.callback_url if event.transaction is not None else None
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
    callback_url = event.transaction.callback_url if event.transaction is not None else None
    targets = _targets(callback_url=callback_url, webhook_url=webhook_url)
    return _chains_create(event=event, targets=targets, now=timezone.now(), resend_of=latest)


# --- sending -----------------------------------------------------------------------------------


def webhook_headers(
    *, event_id: str, event_type: str, body: bytes, secrets: SigningSecrets, sent_at: datetime
) -> dict[str, str]:
    """Every header of one request: the event's type and id, and its signatures
    (``webhooks.signing``) with ``sent_at`` as ``webhook-timestamp``."""
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Webhook-Event": event_type,
        "X-Webhook-Event-Id": event_id,
        **webhook_signature_headers(
            message_id=event_id, timestamp=int(sent_at.timestamp()), body=body, secrets=secrets
        ),
    }


@dataclass(frozen=True)
class DeliveryAttemptResult:
    delivery: WebhookDelivery
    attempt: WebhookDeliveryAttempt


@dataclass(frozen=True)
class DeliveryDeferred:
    """A due delivery not sent because its merchant had ``in_flight`` attempts in flight
    already (the cap): no attempt recorded, next attempt at ``until``."""

    delivery_id: int
    until: datetime
    in_flight: int


@dataclass(frozen=True)
class _Claim:
    delivery: WebhookDelivery
    secrets: SigningSecrets


def _delivery_end(*, delivery: WebhookDelivery, reason: str) -> None:
    delivery.status = DeliveryStatus.FAILED
    delivery.next_attempt_at = None
    delivery.claimed_until = None
    delivery.last_error = reason
    delivery.save(
        update_fields=["status", "next_attempt_at", "claimed_until", "last_error", "updated_at"]
    )


def _delivery_give_up(*, delivery: WebhookDelivery) -> None:
    _delivery_end(delivery=delivery, reason=GAVE_UP_ERROR)
    logger.warning(
        "delivery %s of event %s failed: retry window ended after %s recorded attempt(s)",
        delivery.pk,
        delivery.event_id,
        delivery.attempt_count,
    )


def _merchant_claims_serialize(*, merchant_id: int) -> None:
    """Holds, until the transaction ends, the right to count and claim the merchant's
    deliveries (a transaction advisory lock keyed by the merchant)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)",
            [IN_FLIGHT_LOCK_NAMESPACE, merchant_id % 2**31],
        )


def webhook_merchant_in_flight(*, merchant_id: int, now: datetime) -> int:
    """How many of the merchant's deliveries are being sent: claimed, claim not over."""
    return WebhookDelivery.objects.filter(
        event__merchant_id=merchant_id, claimed_until__gt=now
    ).count()


def _defer_seconds(*, deferrals: int) -> float:
    base = settings.WEBHOOK_DELIVERY_DEFER_SECONDS * 2 ** min(deferrals, DEFER_MAX_DOUBLINGS)
    return base * _random.uniform(1.0, 1.5)


@transaction.atomic
def _delivery_claim(
    *, delivery_id: int, now: datetime, deferrals: int = 0
) -> _Claim | DeliveryDeferred | None:
    """The due pending delivery, leased to this sender until the claim time runs out or
    ``give_up_at`` comes, whichever is first, with the merchant's signing secrets;
    ``None`` when not due or taken, or when the chain ends here (``give_up_at`` has come; a
    webhook-URL chain whose URL the merchant removed). A webhook-URL chain takes the merchant's
    current URL. Deferred when the merchant has its cap of attempts in flight."""
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
    event = delivery.event
    hooks = WebhookSettings.objects.filter(merchant_id=event.merchant_id, mode=event.mode).first()
    if delivery.target == DeliveryTarget.WEBHOOK_URL:
        current_url = hooks.url if hooks is not None else ""
        if not current_url:
            _delivery_end(delivery=delivery, reason=URL_REMOVED_ERROR)
            logger.warning(
                "delivery %s of event %s failed: %s (after %s attempt(s))",
                delivery.pk,
                event.event_id,
                URL_REMOVED_ERROR,
                delivery.attempt_count,
            )
            return None
        if current_url != delivery.url:
            logger.info(
                "delivery %s of event %s follows the merchant's new webhook URL",
                delivery.pk,
                event.event_id,
            )
            delivery.url = current_url
    _merchant_claims_serialize(merchant_id=event.merchant_id)
    in_flight = webhook_merchant_in_flight(merchant_id=event.merchant_id, now=now)
    if in_flight >= settings.WEBHOOK_MERCHANT_MAX_IN_FLIGHT:
        defer = timedelta(seconds=_defer_seconds(deferrals=deferrals))
        until = min(now + defer, delivery.give_up_at)
        delivery.next_attempt_at = until
        delivery.save(update_fields=["next_attempt_at", "url", "updated_at"])
        return DeliveryDeferred(delivery_id=delivery.pk, until=until, in_flight=in_flight)
    lease_end = min(
        now + timedelta(seconds=settings.WEBHOOK_DELIVERY_CLAIM_SECONDS), delivery.give_up_at
    )
    delivery.next_attempt_at = lease_end
    delivery.claimed_until = lease_end
    delivery.save(update_fields=["next_attempt_at", "claimed_until", "url", "updated_at"])
    return _Claim(delivery=delivery, secrets=SigningSecrets.of(hooks, now=now))


@transaction.atomic
def _attempt_record(
    *, delivery_id: int, url: str, result: PostResult, now: datetime
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
    delivery.claimed_until = None
    delivery.last_status_code = result.status_code
    delivery.last_error = result.error
    delivery.save()
    attempt = WebhookDeliveryAttempt.objects.create(
        delivery=delivery,
        attempt_number=number,
        url=url,
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
    *, delivery_id: int, now: datetime | None = None, deferrals: int = 0
) -> DeliveryAttemptResult | DeliveryDeferred | None:
    """Makes the due attempt of a pending delivery and records it; ``None`` when the delivery
    is not due (already delivered, given up, scheduled later or being sent by someone else) or
    its chain ended here; ``DeliveryDeferred`` when its merchant has its cap of attempts in
    flight (``deferrals``: how many times in a row this delivery was deferred before)."""
    claim = _delivery_claim(delivery_id=delivery_id, now=now or timezone.now(), deferrals=deferrals)
    if claim is None or isinstance(claim, DeliveryDeferred):
        return claim
    claimed = claim.delivery
    event = claimed.event
    body = event.body_bytes
    headers = webhook_headers(
        event_id=event.event_id,
        event_type=event.event_type,
        body=body,
        secrets=claim.secrets,
        sent_at=now or timezone.now(),
    )
    result = webhook_post(url=claimed.url, body=body, headers=headers)
    recorded = _attempt_record(
        delivery_id=claimed.pk, url=claimed.url, result=result, now=now or timezone.now()
    )
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
    """Up to ``limit`` pending deliveries whose next attempt is due, round-robin across
    merchants: every merchant's earliest due delivery, then every merchant's second, and so on,
    so one merchant's backlog never comes before everyone else's."""
    now = now or timezone.now()
    return list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .annotate(
            turn=Window(
                RowNumber(),
                partition_by=[F("event__merchant_id")],
                order_by=[F("next_attempt_at").asc(), F("id").asc()],
            )
        )
        .order_by("turn", "next_attempt_at", "id")
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
