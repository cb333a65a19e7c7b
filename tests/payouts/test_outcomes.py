"""The one table of transfer outcomes: NIP response codes and each provider's statuses."""

from __future__ import annotations

import pytest

from payouts.providers.base import TransferOutcome
from payouts.providers.outcomes import (
    PROVIDER_STATUS_OUTCOMES,
    nip_code_outcome,
    provider_status_outcome,
    provider_statuses,
)


@pytest.mark.parametrize("code", ["00"])
def test_nip_success(code: str) -> None:
    assert nip_code_outcome(code, confirmed_by_requery=False) == TransferOutcome.SUCCESSFUL


@pytest.mark.parametrize("code", ["01", "02", "09", "25", "94", "96"])
def test_nip_pending_codes_are_never_final(code: str) -> None:
    for confirmed in (False, True):
        assert nip_code_outcome(code, confirmed_by_requery=confirmed) == TransferOutcome.PENDING


@pytest.mark.parametrize(
    "code",
    ["03", "05", "06", "07", "08", "12", "13", "14", "15", "16", "17", "18"]
    + ["51", "57", "58", "61", "92", "97"],
)
def test_nip_final_failures(code: str) -> None:
    assert nip_code_outcome(code, confirmed_by_requery=False) == TransferOutcome.FAILED


def test_nip_91_fails_only_once_a_status_query_confirms_it() -> None:
    assert nip_code_outcome("91", confirmed_by_requery=False) == TransferOutcome.UNKNOWN
    assert nip_code_outcome("91", confirmed_by_requery=True) == TransferOutcome.FAILED


@pytest.mark.parametrize("code", ["34", "35", "63"])
def test_nip_fraud_codes_hold_the_transfer(code: str) -> None:
    assert nip_code_outcome(code, confirmed_by_requery=True) == TransferOutcome.HELD


@pytest.mark.parametrize("code", ["", "4", "99", "x1", "000"])
def test_unknown_nip_codes_are_unknown(code: str) -> None:
    assert nip_code_outcome(code, confirmed_by_requery=True) == TransferOutcome.UNKNOWN


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("success", TransferOutcome.SUCCESSFUL),
        ("SUCCESS", TransferOutcome.SUCCESSFUL),
        *[
            (status, TransferOutcome.FAILED)
            for status in ("failed", "reversed", "rejected", "abandoned", "blocked")
        ],
        *[
            (status, TransferOutcome.PENDING)
            for status in ("pending", "otp", "received", "queued", "processing")
        ],
        ("something-new", TransferOutcome.UNKNOWN),
    ],
)
def test_paystack_statuses(status: str, outcome: TransferOutcome) -> None:
    assert provider_status_outcome("paystack", status) == outcome


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("NEW", TransferOutcome.PENDING),
        ("PENDING", TransferOutcome.PENDING),
        ("SUCCESSFUL", TransferOutcome.SUCCESSFUL),
        ("FAILED", TransferOutcome.FAILED),
    ],
)
def test_flutterwave_statuses(status: str, outcome: TransferOutcome) -> None:
    assert provider_status_outcome("flutterwave", status) == outcome


def test_an_unknown_provider_is_unknown() -> None:
    assert provider_status_outcome("nobody", "success") == TransferOutcome.UNKNOWN


def test_every_status_maps_to_an_outcome_and_back() -> None:
    for provider, statuses in PROVIDER_STATUS_OUTCOMES.items():
        for status, outcome in statuses.items():
            assert status in provider_statuses(provider, outcome)
