"""The NIP session id (the interbank trace id): kept on the payout when the provider reports
it, never replaced once set, shown in the payout API and its webhook, found by the list's
``reference`` filter."""

from __future__ import annotations

import pytest

from payouts.events import payout_event_data
from payouts.models import PayoutStatus
from payouts.providers.sandbox import ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL, ACCOUNT_FAILED
from payouts.services import payout_dispatch, payout_nip_session_ids_record, payout_requery
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import detail_url, reload

pytestmark = pytest.mark.django_db

LIST_URL = "/api/v1/transactions/in/merchant-wallet/payouts"


def test_a_successful_sandbox_payout_gets_its_session_id(funded_wallet, create_payout) -> None:
    payout = create_payout().payout

    payout_dispatch(payout_id=payout.pk)

    payout = reload(payout)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert len(payout.nip_session_id) == 30
    assert payout.nip_session_id.isdigit()


def test_a_failed_payout_has_none(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=ACCOUNT_FAILED).payout

    payout_dispatch(payout_id=payout.pk)

    assert reload(payout).nip_session_id == ""


def test_the_session_id_arrives_with_the_requery_that_settles_it(
    funded_wallet, create_payout
) -> None:
    payout = create_payout(account_number=ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL).payout
    payout_dispatch(payout_id=payout.pk)
    assert reload(payout).nip_session_id == ""

    settled = payout_requery(payout=reload(payout))

    assert settled.status == PayoutStatus.SUCCESSFUL
    assert settled.nip_session_id != ""
    assert payout_event_data(payout=settled)["nip_session_id"] == settled.nip_session_id


def test_the_api_shows_it_and_null_before(
    funded_wallet, create_payout, client_for, merchant_account
):
    client = client_for(merchant_account.test_key.plaintext)
    waiting = create_payout().payout
    sent = create_payout().payout
    payout_dispatch(payout_id=sent.pk)

    assert client.get(detail_url(waiting.pk)).json()["data"]["nip_session_id"] is None
    assert (
        client.get(detail_url(sent.pk)).json()["data"]["nip_session_id"]
        == reload(sent).nip_session_id
    )


def test_the_list_reference_filter_finds_a_payout_by_its_session_id(
    funded_wallet, create_payout, client_for, merchant_account
) -> None:
    client = client_for(merchant_account.test_key.plaintext)
    sent = create_payout().payout
    create_payout()
    payout_dispatch(payout_id=sent.pk)

    body = client.get(LIST_URL, {"reference": reload(sent).nip_session_id}).json()

    assert [item["id"] for item in body["data"]["items"]] == [sent.pk]


def test_a_statement_session_id_fills_only_an_empty_one(test_wallet) -> None:
    empty = PayoutFactory(wallet=test_wallet)
    kept = PayoutFactory(wallet=test_wallet, nip_session_id="111")

    recorded = payout_nip_session_ids_record(session_ids={empty.pk: "222", kept.pk: "333"})

    assert recorded == 1
    assert reload(empty).nip_session_id == "222"
    assert reload(kept).nip_session_id == "111"


def test_a_session_id_that_is_not_alphanumeric_is_not_kept(test_wallet) -> None:
    payout = PayoutFactory(wallet=test_wallet)

    assert payout_nip_session_ids_record(session_ids={payout.pk: "12 34'; --"}) == 0
    assert reload(payout).nip_session_id == ""
