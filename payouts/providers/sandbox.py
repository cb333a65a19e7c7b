"""The test-mode payout provider. No money moves; magic beneficiary accounts pick the outcome.

| account number | initiate             | every requery (verify)        |
|----------------|----------------------|-------------------------------|
| 1000000001     | failed (reversed)    | failed                        |
| 1000000002     | ambiguous (timeout)  | successful                    |
| 1000000003     | ambiguous (timeout)  | still pending → ambiguous     |
| 1000000004     | successful           | reversed: returned by the bank|
| 1000000005     | held: NIP 34 (fraud) | held: NIP 34                  |
| 1000000006     | unknown: NIP 91      | failed: NIP 91 confirmed      |
| 1000000007     | failed: NIP 07       | failed: NIP 07                |
| anything else  | successful           | successful                    |

Accounts 1000000005–7 answer with a NIP response code (``gateway_response``), classified by
``payouts.providers.outcomes`` as a live answer is: 91 is final only on a status query.

The sandbox keeps its transfers in the database (``SandboxTransfer``, one row per reference), so
it behaves the same in the web process, the worker and the sweepers, and initiating twice with
one reference is one transfer. A successful sandbox transfer carries a NIP session id (30
digits: a sending-institution code, the transfer's Lagos time, twelve digits of its code), the
same at every answer, as a real one does.

Two sandbox providers stand in for two real ones: ``sandbox`` and ``sandbox-b`` (the same
behaviour, their transfers kept apart). A merchant may switch either ``down`` (every send is
refused before it connects: ``not_sent``; every check times out) or ``slow`` (every answer comes
``PAYOUT_SANDBOX_SLOW_SECONDS`` late, at most 5) for its own payouts only
(``SandboxProviderSwitch``, set through ``POST /api/v1/test-helpers/payout-providers/{name}``).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import Counter
from collections.abc import Sequence

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from payouts.models import SandboxProviderSwitch, SandboxSwitchState, SandboxTransfer
from payouts.providers.base import (
    ProviderExchange,
    TransferOutcome,
    TransferRequest,
    TransferResult,
)
from payouts.providers.outcomes import nip_code_outcome

ACCOUNT_FAILED = "1000000001"
ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL = "1000000002"
ACCOUNT_ALWAYS_AMBIGUOUS = "1000000003"
ACCOUNT_SUCCEEDS_THEN_RETURNED = "1000000004"
ACCOUNT_FRAUD_HELD = "1000000005"
ACCOUNT_BANK_UNAVAILABLE = "1000000006"
ACCOUNT_INVALID = "1000000007"

# The NIP response code each of these accounts answers, to a send and to a status query alike.
NIP_CODE_ACCOUNTS: dict[str, str] = {
    ACCOUNT_FRAUD_HELD: "34",
    ACCOUNT_BANK_UNAVAILABLE: "91",
    ACCOUNT_INVALID: "07",
}

MAGIC_ACCOUNTS: dict[str, str] = {
    ACCOUNT_FAILED: "failed (reversed); requery answers failed",
    ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL: "ambiguous; the first requery resolves it to successful",
    ACCOUNT_ALWAYS_AMBIGUOUS: "ambiguous; every requery stays ambiguous",
    ACCOUNT_SUCCEEDS_THEN_RETURNED: "successful; a later check finds it returned by the bank",
    ACCOUNT_FRAUD_HELD: "held for suspected fraud (NIP 34); finance resolves it",
    ACCOUNT_BANK_UNAVAILABLE: "ambiguous (NIP 91); the first requery confirms it failed",
    ACCOUNT_INVALID: "failed: invalid account (NIP 07)",
}

FAILED_MESSAGE = "Transfer reversed by the beneficiary bank (sandbox)"
RETURNED_MESSAGE = "Transfer returned by the beneficiary bank after success (sandbox)"
TIMEOUT_MESSAGE = "Provider timed out before confirming the transfer (sandbox)"
DOWN_MESSAGE = "Connection refused: {name} is switched down for this merchant (sandbox)"
SANDBOX_PROVIDER_NAMES: tuple[str, ...] = ("sandbox", "sandbox-b")


class SandboxProvider:
    name = "sandbox"
    code_prefix = "TRF_sbx_"

    def switch_states(self, references: Sequence[str]) -> dict[str, str]:
        """The merchant's switch of this provider for each reference's payout (one read;
        a reference without a switch is ``up``)."""
        if not references:
            return {}
        rows = SandboxProviderSwitch.objects.filter(
            provider_name=self.name,
            merchant__payouts__attempts__reference__in=list(references),
        ).values_list("merchant__payouts__attempts__reference", "state")
        return {reference: state for reference, state in rows if state != SandboxSwitchState.UP}

    def _down_answer(self, operation: str) -> TransferResult:
        message = DOWN_MESSAGE.format(name=self.name)
        sending = operation.endswith("initiate_transfer")
        outcome = TransferOutcome.NOT_SENT if sending else TransferOutcome.UNKNOWN
        return TransferResult(
            outcome=outcome,
            message=message,
            raw=(
                ProviderExchange(operation=operation, http_status=None, body=None, error=message),
            ),
        )

    @staticmethod
    def _slow_down(states: dict[str, str]) -> None:
        if SandboxSwitchState.SLOW in states.values():
            time.sleep(min(float(getattr(settings, "PAYOUT_SANDBOX_SLOW_SECONDS", 3.0)), 5.0))

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        return self.initiate_transfers([request])[0]

    def initiate_transfers(self, requests: Sequence[TransferRequest]) -> list[TransferResult]:
        """``initiate_transfer`` for many requests: a request whose merchant switched this
        provider down is refused before it connects; the rest are answered as
        ``_transfers_initiate`` answers them (late, when switched slow)."""
        states = self.switch_states([request.reference for request in requests])
        self._slow_down(states)
        reachable = [r for r in requests if states.get(r.reference) != SandboxSwitchState.DOWN]
        answered = iter(self._transfers_initiate(reachable))
        return [
            self._down_answer(f"{self.name}.initiate_transfer")
            if states.get(request.reference) == SandboxSwitchState.DOWN
            else next(answered)
            for request in requests
        ]

    def _transfers_initiate(self, requests: Sequence[TransferRequest]) -> list[TransferResult]:
        """Every request's answer, in two statements whatever the count: one insert of the new
        transfers (a reference already held is left as it is) and one read of them all; plus
        one count per transfer initiated again."""
        if not requests:
            return []
        generated = {request.reference: self._new_transfer(request) for request in requests}
        SandboxTransfer.objects.bulk_create(generated.values(), ignore_conflicts=True)
        held = {
            transfer.reference: transfer
            for transfer in SandboxTransfer.objects.filter(
                provider_name=self.name, reference__in=list(generated)
            )
        }
        repeated = [
            held[reference].pk
            for reference, transfer in generated.items()
            if reference in held and held[reference].transfer_code != transfer.transfer_code
        ]
        # A reference twice in one call is the same transfer initiated twice.
        repeated += [
            held[reference].pk
            for reference, n in Counter(request.reference for request in requests).items()
            if reference in held
            for _again in range(n - 1)
        ]
        if repeated:
            for pk, times in Counter(repeated).items():
                SandboxTransfer.objects.filter(pk=pk).update(
                    initiate_count=F("initiate_count") + times
                )
        return [
            self._initiate_answer(
                held[request.reference]
                if request.reference in held
                else self._transfer_record(request)  # its generated code was taken: again
            )
            for request in requests
        ]

    def _initiate_answer(self, transfer: SandboxTransfer) -> TransferResult:
        account = transfer.account_number
        nip_code = NIP_CODE_ACCOUNTS.get(account, "")
        if nip_code:
            outcome = nip_code_outcome(nip_code, confirmed_by_requery=False)
            message, http_status = nip_code_message(nip_code), 200
        elif account == ACCOUNT_FAILED:
            outcome, message, http_status = TransferOutcome.FAILED, FAILED_MESSAGE, 200
        elif account in (ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL, ACCOUNT_ALWAYS_AMBIGUOUS):
            # The transfer reached the sandbox but the answer was lost: a gateway timeout.
            outcome, message, http_status = TransferOutcome.UNKNOWN, TIMEOUT_MESSAGE, 504
        else:
            outcome, message, http_status = TransferOutcome.SUCCESSFUL, "Transfer successful", 200
        body = None if http_status == 504 else self._body(transfer, outcome, nip_code=nip_code)
        return TransferResult(
            outcome=outcome,
            provider_reference=transfer.transfer_code if body else "",
            session_id=sandbox_session_id(transfer) if body and outcome == "successful" else "",
            message=message,
            nip_code=nip_code,
            raw=(
                ProviderExchange(
                    operation=f"{self.name}.initiate_transfer",
                    http_status=http_status,
                    body=body,
                    error=message if body is None else "",
                ),
            ),
        )

    def verify_transfer(self, *, reference: str) -> TransferResult:
        states = self.switch_states([reference])
        if states.get(reference) == SandboxSwitchState.DOWN:
            return self._down_answer(f"{self.name}.verify_transfer")
        self._slow_down(states)
        with transaction.atomic():
            transfer = (
                SandboxTransfer.objects.select_for_update()
                .filter(provider_name=self.name, reference=reference)
                .first()
            )
            if transfer is None:
                return TransferResult(
                    outcome=TransferOutcome.NOT_FOUND,
                    message="Transfer not found",
                    raw=(
                        ProviderExchange(
                            operation=f"{self.name}.verify_transfer",
                            http_status=404,
                            body={"status": False, "message": "Transfer not found"},
                        ),
                    ),
                )
            transfer.query_count = F("query_count") + 1
            transfer.save(update_fields=["query_count", "updated_at"])
            transfer.refresh_from_db(fields=["query_count"])
        account = transfer.account_number
        nip_code = NIP_CODE_ACCOUNTS.get(account, "")
        if nip_code:
            outcome = nip_code_outcome(nip_code, confirmed_by_requery=True)
            message = nip_code_message(nip_code)
        elif account == ACCOUNT_FAILED:
            outcome, message = TransferOutcome.FAILED, FAILED_MESSAGE
        elif account == ACCOUNT_SUCCEEDS_THEN_RETURNED:
            outcome, message = TransferOutcome.FAILED, RETURNED_MESSAGE
        elif account == ACCOUNT_ALWAYS_AMBIGUOUS:
            outcome, message = TransferOutcome.PENDING, "Transfer is still being processed"
        else:
            outcome, message = TransferOutcome.SUCCESSFUL, "Transfer successful"
        return TransferResult(
            outcome=outcome,
            provider_reference=transfer.transfer_code,
            session_id=sandbox_session_id(transfer) if outcome == "successful" else "",
            message=message,
            nip_code=nip_code,
            raw=(
                ProviderExchange(
                    operation=f"{self.name}.verify_transfer",
                    http_status=200,
                    body=self._body(transfer, outcome, nip_code=nip_code),
                ),
            ),
        )

    def _new_transfer(self, request: TransferRequest) -> SandboxTransfer:
        """An unsaved sandbox transfer for the request, with a fresh transfer code."""
        return SandboxTransfer(
            provider_name=self.name,
            reference=request.reference,
            account_number=request.account_number,
            amount=request.amount,
            outcome=_initial_outcome(request.account_number),
            transfer_code=f"{self.code_prefix}{secrets.token_hex(8)}",
        )

    def _transfer_record(self, request: TransferRequest) -> SandboxTransfer:
        """The sandbox transfer for this reference, created on first sight (idempotent)."""
        try:
            with transaction.atomic():
                transfer = self._new_transfer(request)
                transfer.save(force_insert=True)
                return transfer
        except IntegrityError:  # sent before: the same transfer, counted again
            existing = SandboxTransfer.objects.get(
                provider_name=self.name, reference=request.reference
            )
        SandboxTransfer.objects.filter(pk=existing.pk).update(
            initiate_count=F("initiate_count") + 1
        )
        return existing

    @staticmethod
    def _body(
        transfer: SandboxTransfer, outcome: TransferOutcome, *, nip_code: str = ""
    ) -> dict[str, object]:
        status = {
            TransferOutcome.SUCCESSFUL: "success",
            TransferOutcome.FAILED: "failed" if nip_code else "reversed",
            TransferOutcome.PENDING: "pending",
            TransferOutcome.HELD: "held",
        }.get(outcome, "pending")
        successful = outcome == TransferOutcome.SUCCESSFUL
        return {
            "status": True,
            "data": {
                "reference": transfer.reference,
                "transfer_code": transfer.transfer_code,
                "status": status,
                "gateway_response": nip_code or None,
                "amount": str(transfer.amount),
                "session": {
                    "provider": "nip" if successful else None,
                    "id": sandbox_session_id(transfer) if successful else None,
                },
            },
        }


class SandboxBProvider(SandboxProvider):
    """The second sandbox provider: the same magic accounts, transfers of its own."""

    name = "sandbox-b"
    code_prefix = "TRF_sbxb_"


SANDBOX_INSTITUTION_CODE = "999999"


def sandbox_session_id(transfer: SandboxTransfer) -> str:
    """A NIP-shaped session id, fixed for the transfer (every answer gives the same one)."""
    digest = int(hashlib.sha256(transfer.transfer_code.encode()).hexdigest(), 16)
    moment = timezone.localtime(transfer.created_at)
    return f"{SANDBOX_INSTITUTION_CODE}{moment:%y%m%d%H%M%S}{digest % 10**12:012d}"


NIP_CODE_MESSAGES: dict[str, str] = {
    "34": "Suspected fraud: transfer held by the beneficiary bank (sandbox, NIP 34)",
    "91": "Beneficiary bank unavailable (sandbox, NIP 91)",
    "07": "Invalid account (sandbox, NIP 07)",
}


def nip_code_message(code: str) -> str:
    return NIP_CODE_MESSAGES.get(code, f"NIP response {code} (sandbox)")


def _initial_outcome(account_number: str) -> str:
    if account_number in NIP_CODE_ACCOUNTS:
        return nip_code_outcome(NIP_CODE_ACCOUNTS[account_number], confirmed_by_requery=False)
    if account_number == ACCOUNT_FAILED:
        return TransferOutcome.FAILED
    if account_number in (ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL, ACCOUNT_ALWAYS_AMBIGUOUS):
        return TransferOutcome.UNKNOWN
    return TransferOutcome.SUCCESSFUL
