"""Payout writes, one module per capability; callers import from the package.

| module | owns |
|---|---|
| ``create`` | a payout create: idempotency, checks, the reservation, the wake on commit |
| ``bulk`` | a bulk payout request (an extension): its items, each a create |
| ``bulk_proposals`` | a bulk upload in the back office: one person proposes, another submits |
| ``controls`` | the merchant's controls: approval threshold, approve, schedule, cancel, expiry |
| ``settle`` | a provider's answer or a person's decision applied, and the one way it is written |
| ``dispatch`` | dispatch rounds: claim, send, apply (a dispatch is a round of one); failover |
| ``attempts`` | each send of a payout to a provider, under its own reference; one can succeed |
| ``routing`` | which provider a payout's next attempt goes to (``PayoutRoute`` rules, defaults) |
| ``circuits`` | each provider's circuit breaker, and its health as the back office shows it |
| ``sandbox_switch`` | a merchant's test-mode switch of a sandbox provider (down, slow, up) |
| ``requery`` | asking the provider about a sent payout, and settling from the answer |
| ``returns`` | a paid payout the beneficiary's bank sent back |
| ``trace_ids`` | NIP session ids from statements |
| ``resolution`` | two-person manual resolution in the back office |
| ``sweepers`` | requery due payouts, dispatch stuck ones, one payout now at an operator's request |
| ``counts`` | the payout list's per-day counts: fold and rebuild |
| ``timing`` | the requery schedule, escalation and the dispatch delays, from settings |
| ``provider_events`` | a provider's transfer event (webhook) applied once, in any order |
| ``flutterwave_events`` | Flutterwave's transfer webhooks, applied once its read confirms them |

Money moves only through ``wallets.services``; every status change goes through
``payouts.state_machine`` on a locked payout; provider calls happen outside any transaction and
carry their attempt's reference (the first attempt's is ``internal_reference``) as their
idempotency reference. ``bulk_proposals`` is imported from its own module: it reads rows with
the API's item parser, which imports this package; ``flutterwave_events`` too (its webhook route
imports it directly).
"""

from payouts.services.bulk import (
    BATCH_AUDIT_ACTION,
    BATCH_CONFLICT_MESSAGE,
    BATCH_ITEMS_COUNT_MESSAGE,
    BATCH_MAX_ITEMS,
    PayoutBatchCreateResult,
    PayoutBatchItem,
    PayoutBatchItemError,
    PayoutBatchItemOutcome,
    payout_batch_create,
    payout_batch_fingerprint,
    payout_batch_preview,
)
from payouts.services.controls import (
    APPROVAL_EXPIRED_MESSAGE,
    CANCELLED_MESSAGE,
    ApprovalExpiryReport,
    approval_expires_after,
    payout_approval_threshold_set,
    payout_approve,
    payout_cancel,
    payout_is_held,
    payouts_approval_expire,
)
from payouts.services.counts import (
    FOLD_ROUND_SIZE,
    PayoutCountsRebuild,
    payout_counts_fold,
    payout_counts_rebuild,
)
from payouts.services.create import (
    IDEMPOTENCY_CONFLICT_MESSAGE,
    PUBLISH_RETRY_POLICY,
    PayoutCreateResult,
    PayoutPlan,
    internal_reference_generate,
    payout_create,
    payout_dispatch_enqueue,
    payout_fingerprint,
)
from payouts.services.dispatch import (
    CLAIM_FIELDS,
    DispatchAnswer,
    DispatchClaim,
    DispatchRoundReport,
    DispatchStep,
    claim_is_stale,
    dispatch_round_size,
    payout_dispatch,
    payouts_dispatch_apply,
    payouts_dispatch_claim,
    payouts_dispatch_round,
    payouts_dispatch_send,
    transfer_request,
)
from payouts.services.provider_events import (
    ProviderEventResult,
    ProviderTransferEvent,
    ProviderTransferEventKind,
    payout_for_provider_reference,
    provider_transfer_event_apply,
)
from payouts.services.requery import (
    NOT_ELIGIBLE_MESSAGE,
    payout_requery,
    payout_requery_apply,
)
from payouts.services.resolution import (
    EVIDENCE_MAX_LENGTHS,
    NOT_AMBIGUOUS_MESSAGE,
    OPEN_PROPOSAL_EXISTS_MESSAGE,
    RESOLUTION_REASON_MIN_LENGTH,
    SAME_USER_MESSAGE,
    payout_resolution_approve,
    payout_resolution_propose,
    payout_resolution_reject,
    payout_resolve_manually,
)
from payouts.services.returns import (
    ALREADY_RETURNED_MESSAGE,
    DEFAULT_RETURN_REASON,
    NOT_RETURNABLE_MESSAGE,
    PayoutReturnResult,
    ReturnsCheckReport,
    payout_return,
    payout_return_check,
    payouts_check_returns,
    return_refunds_fee,
)
from payouts.services.settle import (
    DEFAULT_FAILURE_MESSAGE,
    PROVIDER_RESPONSES_KEPT,
    SETTLEMENT_FIELDS,
    PayoutFinalEffects,
    payout_fail,
    payout_succeed,
    payouts_settled_write,
    provider_answer_record,
    provider_answer_settle,
)
from payouts.services.sweepers import (
    DEFAULT_SWEEP_LIMIT,
    DEFERRED_OUTCOME,
    REQUERY_LEASE,
    REQUERYABLE_STATUSES,
    DispatchSweepReport,
    PayoutForcedResult,
    RequerySweepReport,
    SweepReport,
    dispatch_stuck_after,
    payout_dispatch_now,
    payout_requery_now,
    payouts_dispatch_stuck,
    payouts_requery_due,
    payouts_requery_escalate,
)
from payouts.services.timing import (
    dispatch_claim_timeout,
    next_requery_at,
    requery_delay,
    requery_escalate_after,
    requery_schedule,
    seconds_setting,
)
from payouts.services.trace_ids import (
    SESSION_IDS_PER_UPDATE,
    payout_nip_session_ids_record,
)

__all__ = [
    "ALREADY_RETURNED_MESSAGE",
    "APPROVAL_EXPIRED_MESSAGE",
    "ApprovalExpiryReport",
    "CANCELLED_MESSAGE",
    "approval_expires_after",
    "payout_approval_threshold_set",
    "payout_approve",
    "payout_cancel",
    "payout_is_held",
    "payouts_approval_expire",
    "BATCH_AUDIT_ACTION",
    "BATCH_CONFLICT_MESSAGE",
    "BATCH_ITEMS_COUNT_MESSAGE",
    "BATCH_MAX_ITEMS",
    "CLAIM_FIELDS",
    "DEFAULT_FAILURE_MESSAGE",
    "DEFAULT_RETURN_REASON",
    "DEFAULT_SWEEP_LIMIT",
    "DEFERRED_OUTCOME",
    "DispatchAnswer",
    "DispatchClaim",
    "DispatchRoundReport",
    "DispatchStep",
    "DispatchSweepReport",
    "EVIDENCE_MAX_LENGTHS",
    "FOLD_ROUND_SIZE",
    "IDEMPOTENCY_CONFLICT_MESSAGE",
    "NOT_AMBIGUOUS_MESSAGE",
    "NOT_ELIGIBLE_MESSAGE",
    "NOT_RETURNABLE_MESSAGE",
    "OPEN_PROPOSAL_EXISTS_MESSAGE",
    "PROVIDER_RESPONSES_KEPT",
    "PUBLISH_RETRY_POLICY",
    "PayoutBatchCreateResult",
    "PayoutBatchItem",
    "PayoutBatchItemError",
    "PayoutBatchItemOutcome",
    "PayoutCountsRebuild",
    "PayoutCreateResult",
    "PayoutFinalEffects",
    "PayoutForcedResult",
    "PayoutPlan",
    "PayoutReturnResult",
    "ProviderEventResult",
    "ProviderTransferEvent",
    "ProviderTransferEventKind",
    "REQUERYABLE_STATUSES",
    "REQUERY_LEASE",
    "RESOLUTION_REASON_MIN_LENGTH",
    "RequerySweepReport",
    "ReturnsCheckReport",
    "SAME_USER_MESSAGE",
    "SESSION_IDS_PER_UPDATE",
    "SETTLEMENT_FIELDS",
    "SweepReport",
    "claim_is_stale",
    "dispatch_claim_timeout",
    "dispatch_round_size",
    "dispatch_stuck_after",
    "internal_reference_generate",
    "next_requery_at",
    "payout_batch_create",
    "payout_batch_fingerprint",
    "payout_batch_preview",
    "payout_counts_fold",
    "payout_counts_rebuild",
    "payout_create",
    "payout_dispatch",
    "payout_dispatch_enqueue",
    "payout_dispatch_now",
    "payout_fail",
    "payout_fingerprint",
    "payout_for_provider_reference",
    "payout_nip_session_ids_record",
    "payout_requery",
    "payout_requery_apply",
    "payout_requery_now",
    "payout_resolution_approve",
    "payout_resolution_propose",
    "payout_resolution_reject",
    "payout_resolve_manually",
    "payout_return",
    "payout_return_check",
    "payout_succeed",
    "payouts_check_returns",
    "payouts_dispatch_apply",
    "payouts_dispatch_claim",
    "payouts_dispatch_round",
    "payouts_dispatch_send",
    "payouts_dispatch_stuck",
    "payouts_requery_due",
    "payouts_requery_escalate",
    "payouts_settled_write",
    "provider_answer_record",
    "provider_answer_settle",
    "provider_transfer_event_apply",
    "requery_delay",
    "requery_escalate_after",
    "requery_schedule",
    "return_refunds_fee",
    "seconds_setting",
    "transfer_request",
]
