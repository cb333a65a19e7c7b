"""Flutterwave's ``transfer.completed`` webhooks applied to live payouts, once confirmed.

Flutterwave authenticates its webhooks with a static secret hash (``verif-hash``), not with a
signature of the body: whoever learns the hash could forge an event, and a forged ``FAILED``
would release money Flutterwave paid. So an event is never applied on its own word. For a
Flutterwave payout of ours, the transfer is read back by our reference
(``FlutterwaveProvider.verify_transfer``, within ``FLUTTERWAVE_TIMEOUT_SECONDS``) and only a
final status from that read (``SUCCESSFUL``/``FAILED``) is applied, through
``provider_transfer_event_apply`` (once per event, the settle and return paths, the record of
every event). A read that is not final or fails applies nothing: the payout's scheduled
requery settles it. An event for a reference we
do not hold is applied as sent, which only keeps it (``unknown_reference``); no read is made
for it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings

from integrations.flutterwave.webhooks import FlutterwaveTransferWebhook
from merchants.models import Mode
from payouts.models import Payout
from payouts.providers.base import TransferOutcome
from payouts.providers.flutterwave import PROVIDER_NAME, FlutterwaveProvider
from payouts.services.provider_events import (
    ProviderEventResult,
    ProviderTransferEvent,
    ProviderTransferEventKind,
    payout_for_provider_reference,
    provider_transfer_event_apply,
)

logger = logging.getLogger(__name__)

EVENT_KINDS: dict[str, ProviderTransferEventKind] = {
    "SUCCESSFUL": ProviderTransferEventKind.SUCCESS,
    "FAILED": ProviderTransferEventKind.FAILED,
}
CONFIRMED_KINDS: dict[TransferOutcome, ProviderTransferEventKind] = {
    TransferOutcome.SUCCESSFUL: ProviderTransferEventKind.SUCCESS,
    TransferOutcome.FAILED: ProviderTransferEventKind.FAILED,
}
KIND_STATUSES = {kind: status for status, kind in EVENT_KINDS.items()}


@dataclass(frozen=True)
class FlutterwaveWebhookApplied:
    """What one webhook did: ``result`` is None when nothing was applied (a status that is not
    final, or one Flutterwave's read did not confirm); ``payout`` as it is now, if ours."""

    result: ProviderEventResult | None
    payout: Payout | None


def _event(
    webhook: FlutterwaveTransferWebhook,
    kind: ProviderTransferEventKind,
    *,
    message: str,
    provider_reference: str,
    confirmation: dict | None = None,
) -> ProviderTransferEvent:
    raw: dict = {"event": webhook.raw}
    if confirmation is not None:
        raw["confirmed_by"] = confirmation
    identity = webhook.provider_reference or webhook.reference
    return ProviderTransferEvent(
        provider=PROVIDER_NAME,
        event_id=f"transfer.completed:{identity}:{KIND_STATUSES[kind]}",
        reference=webhook.reference,
        kind=kind,
        message=message,
        provider_reference=provider_reference,
        amount=webhook.amount,
        currency=webhook.currency,
        mode=Mode.LIVE,
        raw=raw,
    )


def flutterwave_transfer_webhook_apply(
    webhook: FlutterwaveTransferWebhook,
) -> FlutterwaveWebhookApplied:
    """Applies an authenticated ``transfer.completed`` event once Flutterwave's own read of the
    transfer confirms a final status (see the module)."""
    claimed = EVENT_KINDS.get(webhook.status)
    if claimed is None:
        logger.info(
            "flutterwave webhook for %r with status %r: not final, nothing applied",
            webhook.reference[:60],
            webhook.status[:20],
        )
        return FlutterwaveWebhookApplied(result=None, payout=None)
    payout = payout_for_provider_reference(PROVIDER_NAME, webhook.reference)
    if payout is None or payout.mode != Mode.LIVE:
        event = _event(
            webhook,
            claimed,
            message=webhook.message,
            provider_reference=webhook.provider_reference,
        )
        return FlutterwaveWebhookApplied(result=provider_transfer_event_apply(event), payout=None)
    # Inside Flutterwave's webhook call: its own (shorter) timeout, not the dispatch's.
    reader = FlutterwaveProvider(timeout_seconds=settings.FLUTTERWAVE_TIMEOUT_SECONDS)
    verified = reader.verify_transfer(reference=webhook.reference)
    confirmed = CONFIRMED_KINDS.get(verified.outcome)
    if confirmed is None:
        logger.warning(
            "flutterwave webhook for payout %s says %s; Flutterwave's read answers %s: nothing "
            "applied, the scheduled requery settles it",
            payout.internal_reference,
            webhook.status,
            verified.outcome,
        )
        return FlutterwaveWebhookApplied(result=None, payout=payout)
    if confirmed != claimed:
        logger.warning(
            "flutterwave webhook for payout %s says %s; Flutterwave's read says %s: the read "
            "is applied",
            payout.internal_reference,
            webhook.status,
            KIND_STATUSES[confirmed],
        )
    event = _event(
        webhook,
        confirmed,
        message=verified.message or webhook.message,
        provider_reference=verified.provider_reference or webhook.provider_reference,
        confirmation=verified.raw[-1].as_dict() if verified.raw else None,
    )
    result = provider_transfer_event_apply(event)
    return FlutterwaveWebhookApplied(result=result, payout=Payout.objects.get(pk=payout.pk))
