"""What a transfer's status means for the money: the one table from NIP response codes and from
each provider's own transfer statuses to our ``TransferOutcome``.

Every adapter, webhook parser and statement reader classifies through
``nip_code_outcome`` and ``provider_status_outcome``; no other module keeps a list of statuses.

NIP (NIBSS Instant Payment) response codes, as the beneficiary's bank answers them:

* ``00``: credited → ``SUCCESSFUL``;
* ``01 02 09 25 94 96``: still in progress, or nobody knows yet → ``PENDING`` (ask again);
* ``03 05–08 12–18 51 57 58 61 92 97``: refused or failed for good → ``FAILED``;
* ``91`` (beneficiary bank unavailable): on the answer to a send it proves nothing, the credit
  may still land → ``UNKNOWN``; only a transaction status query (a verify/requery) answering
  ``91`` confirms it → ``FAILED``;
* ``34 35 63`` (suspected fraud, restricted, security violation) → ``HELD``: the money is in
  doubt and a person decides (``payouts.services.resolution``).

A code or status outside the table is ``UNKNOWN``: never final, never money moved.
"""

from __future__ import annotations

from types import MappingProxyType

from payouts.providers.base import TransferOutcome

NIP_SUCCESS_CODES = frozenset({"00"})
NIP_PENDING_CODES = frozenset({"01", "02", "09", "25", "94", "96"})
NIP_FAILED_CODES = frozenset(
    {"03", "05", "06", "07", "08", "12", "13", "14", "15", "16", "17", "18"}
    | {"51", "57", "58", "61", "92", "97"}
)
# Failed only once a status query confirms it: on a send's answer the credit may still land.
NIP_FAILED_AFTER_REQUERY_CODES = frozenset({"91"})
NIP_FRAUD_CODES = frozenset({"34", "35", "63"})

NIP_CODE_OUTCOMES: MappingProxyType[str, TransferOutcome] = MappingProxyType(
    {
        **dict.fromkeys(NIP_SUCCESS_CODES, TransferOutcome.SUCCESSFUL),
        **dict.fromkeys(NIP_PENDING_CODES, TransferOutcome.PENDING),
        **dict.fromkeys(NIP_FAILED_CODES, TransferOutcome.FAILED),
        **dict.fromkeys(NIP_FAILED_AFTER_REQUERY_CODES, TransferOutcome.UNKNOWN),
        **dict.fromkeys(NIP_FRAUD_CODES, TransferOutcome.HELD),
    }
)

# Each provider's transfer statuses (lower case), as its API and webhooks spell them.
PROVIDER_STATUS_OUTCOMES: MappingProxyType[str, MappingProxyType[str, TransferOutcome]] = (
    MappingProxyType(
        {
            "paystack": MappingProxyType(
                {
                    "success": TransferOutcome.SUCCESSFUL,
                    **dict.fromkeys(
                        ("failed", "reversed", "rejected", "abandoned", "blocked"),
                        TransferOutcome.FAILED,
                    ),
                    **dict.fromkeys(
                        ("pending", "otp", "received", "queued", "processing"),
                        TransferOutcome.PENDING,
                    ),
                }
            ),
            "flutterwave": MappingProxyType(
                {
                    "new": TransferOutcome.PENDING,
                    "pending": TransferOutcome.PENDING,
                    "successful": TransferOutcome.SUCCESSFUL,
                    "failed": TransferOutcome.FAILED,
                }
            ),
            # The sandbox answers in Paystack's words, plus ``held`` for its fraud account.
            "sandbox": MappingProxyType(
                {
                    "success": TransferOutcome.SUCCESSFUL,
                    "reversed": TransferOutcome.FAILED,
                    "failed": TransferOutcome.FAILED,
                    "pending": TransferOutcome.PENDING,
                    "held": TransferOutcome.HELD,
                }
            ),
        }
    )
)


def nip_code_outcome(code: str, *, confirmed_by_requery: bool) -> TransferOutcome:
    """What a NIP response ``code`` means for the money. ``confirmed_by_requery``: the code is
    the answer to a status query (verify/requery), not to the send itself; only then does
    ``91`` mean failed."""
    code = (code or "").strip()
    if code in NIP_FAILED_AFTER_REQUERY_CODES and confirmed_by_requery:
        return TransferOutcome.FAILED
    return NIP_CODE_OUTCOMES.get(code, TransferOutcome.UNKNOWN)


def is_nip_code(code: str) -> bool:
    """``code`` is a NIP response code the table knows."""
    return (code or "").strip() in NIP_CODE_OUTCOMES


def provider_status_outcome(provider: str, status: str) -> TransferOutcome:
    """What ``provider``'s transfer ``status`` means for the money (``UNKNOWN`` when the table
    does not know the provider or the status)."""
    statuses = PROVIDER_STATUS_OUTCOMES.get(provider, MappingProxyType({}))
    return statuses.get((status or "").strip().lower(), TransferOutcome.UNKNOWN)


def provider_statuses(provider: str, outcome: TransferOutcome) -> frozenset[str]:
    """``provider``'s statuses that mean ``outcome`` (for filters and documentation)."""
    statuses = PROVIDER_STATUS_OUTCOMES.get(provider, MappingProxyType({}))
    return frozenset(status for status, mapped in statuses.items() if mapped == outcome)
