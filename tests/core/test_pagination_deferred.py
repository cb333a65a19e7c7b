"""``paginate``'s deferred join: deep pages read their primary keys first, then those rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from core.api.pagination import DEFERRED_JOIN_MIN_OFFSET, paginate
from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create
from payouts.models import Payout, PayoutStatus
from payouts.selectors import PayoutListFilters, payout_list
from tests.payouts.factories import PayoutFactory
from wallets.models import Wallet
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

# Every page of these tests is read with the deferred join unless a test says otherwise.
ALWAYS = 0


@pytest.fixture
def wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)


@pytest.fixture
def payouts(wallet: Wallet) -> list[Payout]:
    """Eleven payouts, newest first as the list orders them: three timestamps shared by several
    rows (so ties are broken by -id), every third one failed."""
    now = timezone.now()
    created = []
    for index in range(11):
        payout = PayoutFactory(
            wallet=wallet,
            status=PayoutStatus.FAILED if index % 3 == 0 else PayoutStatus.SUCCESSFUL,
        )
        Payout.objects.filter(pk=payout.pk).update(created_at=now - timedelta(hours=index % 3))
        created.append(payout)
    return sorted(
        Payout.objects.filter(pk__in=[p.pk for p in created]),
        key=lambda p: (p.created_at, p.pk),
        reverse=True,
    )


def listed(merchant_account: MerchantCreated, **filters: object):
    return payout_list(
        merchant=merchant_account.merchant, mode=Mode.TEST, filters=PayoutListFilters(**filters)
    )


def listed_instances(merchant_account: MerchantCreated):
    """The same payouts as the list, as model instances."""
    return Payout.objects.filter(
        wallet__merchant=merchant_account.merchant, wallet__mode=Mode.TEST
    ).order_by("-created_at", "-id")


def pks(items: list[Any]) -> list[int]:
    """The ids of model instances or of the list's named rows."""
    return [item.id for item in items]


def test_deep_page_keeps_the_order_of_the_list_across_equal_timestamps(
    merchant_account, payouts
) -> None:
    page = paginate(listed(merchant_account), page=2, limit=4, deferred_join_min_offset=ALWAYS)
    assert pks(page.items) == pks(payouts[4:8])
    assert [item.created_at for item in page.items] == sorted(
        (item.created_at for item in page.items), reverse=True
    )


def test_every_page_matches_the_single_query_page(merchant_account, payouts) -> None:
    for page_number in range(1, 5):
        deferred = paginate(
            listed(merchant_account), page=page_number, limit=3, deferred_join_min_offset=ALWAYS
        )
        single = paginate(
            listed(merchant_account), page=page_number, limit=3, deferred_join_min_offset=10**9
        )
        assert pks(deferred.items) == pks(single.items)
    assert pks(deferred.items) == pks(payouts[9:])


def test_named_rows_and_model_instances_page_alike(merchant_account, payouts) -> None:
    """The list's named rows take the deferred join too, keyed by their ``id``."""
    for page_number in range(1, 5):
        rows = paginate(
            listed(merchant_account), page=page_number, limit=3, deferred_join_min_offset=ALWAYS
        )
        instances = paginate(
            listed_instances(merchant_account),
            page=page_number,
            limit=3,
            deferred_join_min_offset=ALWAYS,
        )
        assert pks(rows.items) == pks(instances.items)
        assert all(not isinstance(row, Payout) for row in rows.items)


def test_rows_without_their_key_are_paged_in_one_query(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    statuses = listed(merchant_account).values_list("status", named=True)
    with django_assert_num_queries(1):  # no key to join on: the page at its offset
        page = paginate(statuses, page=2, limit=4, total=11, deferred_join_min_offset=ALWAYS)
    assert [row.status for row in page.items] == [p.status for p in payouts[4:8]]


def test_deep_page_applies_the_filters_and_counts_exactly(merchant_account, payouts) -> None:
    failed = [p for p in payouts if p.status == PayoutStatus.FAILED]
    page = paginate(
        listed(merchant_account, status=PayoutStatus.FAILED),
        page=2,
        limit=2,
        deferred_join_min_offset=ALWAYS,
    )
    assert page.total == len(failed) == 4
    assert pks(page.items) == pks(failed[2:4])
    assert {item.status for item in page.items} == {PayoutStatus.FAILED}


def test_deep_page_leaves_out_other_wallets(merchant_account, payouts) -> None:
    other = merchant_create(name="Other Stores", email="other@example.com")
    PayoutFactory.create_batch(3, wallet=wallet_get(merchant=other.merchant, mode=Mode.TEST))
    page = paginate(listed(merchant_account), page=3, limit=4, deferred_join_min_offset=ALWAYS)
    assert page.total == 11
    assert pks(page.items) == pks(payouts[8:])


def test_last_partial_page(merchant_account, payouts) -> None:
    page = paginate(listed(merchant_account), page=3, limit=4, deferred_join_min_offset=ALWAYS)
    assert pks(page.items) == pks(payouts[8:11])
    assert page.pagination() == {
        "page": 3,
        "limit": 4,
        "total": 11,
        "total_pages": 3,
        "has_next_page": False,
        "has_previous_page": True,
    }


def test_page_beyond_the_end_is_empty_after_the_count_alone(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    with django_assert_num_queries(1):  # the count
        page = paginate(listed(merchant_account), page=4, limit=4, deferred_join_min_offset=ALWAYS)
    assert page.items == []
    assert page.total == 11


def test_deep_page_costs_one_query_more_than_a_shallow_one(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):  # count, page
        paginate(listed(merchant_account), page=2, limit=4)
    with django_assert_num_queries(3):  # count, the page's keys, their rows
        paginate(listed(merchant_account), page=2, limit=4, deferred_join_min_offset=ALWAYS)


def test_known_total_skips_the_count(merchant_account, payouts, django_assert_num_queries) -> None:
    with django_assert_num_queries(2):  # the page's keys, their rows
        page = paginate(
            listed(merchant_account), page=2, limit=4, total=11, deferred_join_min_offset=ALWAYS
        )
    assert pks(page.items) == pks(payouts[4:8])


def test_offset_threshold_decides_the_path(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):  # offset 4 < 5: count, page
        paginate(listed(merchant_account), page=2, limit=4, deferred_join_min_offset=5)
    with django_assert_num_queries(3):  # offset 8 >= 5: count, keys, rows
        paginate(listed(merchant_account), page=3, limit=4, deferred_join_min_offset=5)


def test_default_threshold_keeps_early_pages_to_one_query(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    """With the total given (no count) and no rows that deep, each page is one query: the
    whole rows before ``DEFERRED_JOIN_MIN_OFFSET``, only the keys from it on."""
    limit = 50
    last_single_query_page = DEFERRED_JOIN_MIN_OFFSET // limit
    with django_assert_num_queries(1) as before:
        paginate(listed(merchant_account), page=last_single_query_page, limit=limit, total=10**6)
    with django_assert_num_queries(1) as after:  # no keys came back, so no rows to fetch
        page = paginate(
            listed(merchant_account), page=last_single_query_page + 1, limit=limit, total=10**6
        )
    assert page.items == []
    assert '"payouts_payout"."narration"' in before.captured_queries[0]["sql"]
    assert '"payouts_payout"."narration"' not in after.captured_queries[0]["sql"]


def test_deep_page_keeps_select_related(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    with django_assert_num_queries(3):  # count, keys, rows joined to their wallet
        page = paginate(
            listed_instances(merchant_account).select_related("wallet"),
            page=2,
            limit=4,
            deferred_join_min_offset=ALWAYS,
        )
    with django_assert_num_queries(0):
        wallet_ids = {item.wallet.pk for item in page.items}
    assert wallet_ids == {payouts[0].wallet_id}


def test_deep_page_keeps_prefetch_related(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    with django_assert_num_queries(4):  # count, keys, rows, their resolutions
        page = paginate(
            listed_instances(merchant_account).prefetch_related("resolutions"),
            page=2,
            limit=4,
            deferred_join_min_offset=ALWAYS,
        )
    with django_assert_num_queries(0):
        resolutions = [list(item.resolutions.all()) for item in page.items]
    assert resolutions == [[], [], [], []]


def test_deep_page_keeps_only(merchant_account, payouts, django_assert_num_queries) -> None:
    page = paginate(
        listed_instances(merchant_account).only("id", "status"),
        page=2,
        limit=4,
        deferred_join_min_offset=ALWAYS,
    )
    assert pks(page.items) == pks(payouts[4:8])
    assert page.items[0].get_deferred_fields() >= {"narration", "amount"}


def test_values_querysets_are_paged_in_one_query(
    merchant_account, payouts, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):  # count, page
        page = paginate(
            listed(merchant_account).values("id", "status"),
            page=2,
            limit=4,
            deferred_join_min_offset=ALWAYS,
        )
    assert [row["id"] for row in page.items] == pks(payouts[4:8])
