"""The exceptions list: actionable categories first, and the columns it shows."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from reconciliation.models import MatchCategory
from reconciliation.selectors import CATEGORY_PRIORITY
from reconciliation.services import statement_import
from tests.reconciliation.conftest import PAYSTACK_SAMPLE

pytestmark = pytest.mark.django_db

ITEMS_URL = "admin:reconciliation_reconciliationitem_changelist"


def test_the_exceptions_list_shows_mismatches_before_ours_not_on_the_statement(
    paystack_payouts, operator
) -> None:
    statement_import(
        content=PAYSTACK_SAMPLE.read_bytes(),
        file_name=PAYSTACK_SAMPLE.name,
        statement_format="paystack_transfers",
        mode="live",
        actor_label="test",
    )
    client = Client()
    client.force_login(operator)

    page = client.get(reverse(ITEMS_URL), {"kind": "exceptions"}).content.decode()

    shown = re.findall(r'class="status-badge recon-([a-z_]+)"', page)
    assert MatchCategory.MISSING in shown and MatchCategory.AMOUNT_MISMATCH in shown
    ranks = [CATEGORY_PRIORITY.index(category) for category in shown]
    assert ranks == sorted(ranks)
    assert shown[-1] == MatchCategory.MISSING
    headers = re.findall(r'<th scope="col" class="[^"]*column-([a-z_]+)', page)
    assert headers == [
        "line_display",
        "category_badge",
        "state_display",
        "statement_reference_display",
        "statement_side",
        "our_side",
    ]


def test_the_clear_confirmation_names_each_payout_reference_once(
    paystack_payouts, operator
) -> None:
    run = statement_import(
        content=PAYSTACK_SAMPLE.read_bytes(),
        file_name=PAYSTACK_SAMPLE.name,
        statement_format="paystack_transfers",
        mode="live",
        actor_label="test",
    ).run
    exceptions = list(run.items.exclude(category=MatchCategory.MATCHED).select_related("payout"))
    client = Client()
    client.force_login(operator)

    page = client.post(
        reverse(ITEMS_URL),
        {"action": "clear_selected", "_selected_action": [item.pk for item in exceptions]},
    ).content.decode()

    listed = page.split('data-testid="confirmation-objects"')[1].split("</ul>")[0]
    labels = re.findall(r"<li>(.*?)</li>", listed, flags=re.S)
    references = [label.split(" — ")[0] for label in labels]
    assert len(references) == len(set(references))
    for item in exceptions:
        reference = item.payout.internal_reference if item.payout else item.statement_reference
        assert reference in references
