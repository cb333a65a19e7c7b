"""A finance clerk's morning in a real browser (Debian's Chromium through Playwright, against
pytest-django's ``live_server``): an operator uploads the day's NIP statement, sees the
exceptions, proposes the resolution the statement proves and clears the line it explains; a
second user, the approver, approves; the payout is settled, the import reads "every line is
matched or explained", and the audit trail shows both people's acts.

Screenshots of each step are kept in ``var/artifacts/reconciliation/`` (printed at the end).
Skipped when Chromium or Playwright is missing, except under ``REQUIRE_POSTGRES=1`` (CI).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from audit.actors import acting_as
from audit.models import AuditRecord
from payouts.models import Payout, PayoutStatus
from reconciliation.models import ReconciliationItem
from tests.browser import chromium_context, in_thread

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

PASSWORD = "correct horse battery staple 42"
ARTIFACTS = Path(django_settings.VAR_DIR) / "artifacts" / "reconciliation"


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[Any]:
    with chromium_context(
        tmp_path, what="clerk browser test", viewport={"width": 1400, "height": 900}
    ) as context:
        yield context


@pytest.fixture
def clerks(operator, approver) -> dict[str, Any]:
    for user in (operator, approver):
        with acting_as(user):  # their own passwords: no reset holds the approver
            user.set_password(PASSWORD)
            user.save()
    return {"operator": operator, "approver": approver}


class Screens:
    def __init__(self) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.paths: list[Path] = []

    def take(self, page: Any, name: str) -> None:
        path = ARTIFACTS / f"{len(self.paths) + 1:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        self.paths.append(path)


def _log_in(page: Any, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")


def _message_shown(page: Any, text: str) -> None:
    """Waits for the next page's message: the page that posted may still be the one shown."""
    page.locator(".messagelist", has_text=text).wait_for()


def test_a_clerk_imports_proposes_and_a_second_person_approves(
    ambiguous_payout: Payout,
    clerks: dict[str, Any],
    live_server: Any,
    browser_page: Any,
    tmp_path: Path,
) -> None:
    base = live_server.url
    statement = tmp_path / "gtb-nip-outward-2026-11-20.csv"
    day = f"{ambiguous_payout.dispatched_at:%d/%m/%Y}"
    statement.write_text(
        "Session ID,Reference,Amount,Status,Value Date,Beneficiary Account,Beneficiary Bank\n"
        f'999058261120101500000000004242,{ambiguous_payout.internal_reference},"2,500.00",00,'
        f"{day},{ambiguous_payout.account_number},{ambiguous_payout.bank_code}\n"
        f'999044261120113000000000009999,EXT-POS-5521,"7,500.00",00,{day},0456789123,044\n'
    )
    screens = Screens()
    page = browser_page.new_page()

    # The operator imports the statement.
    _log_in(page, base, "operator")
    page.goto(f"{base}/admin/reconciliation/reconciliationrun/")
    page.get_by_text("Import a statement…").click()
    page.set_input_files("#id_statement_file", str(statement))
    page.select_option("#id_statement_format", "nip_settlement")
    page.select_option("#id_mode", "test")
    screens.take(page, "import-form")
    page.get_by_role("button", name="Import and match").click()
    page.wait_for_selector("[data-testid=run-verdict]")
    assert "2 exception(s) still to work." in page.inner_text("[data-testid=run-verdict]")
    _message_shown(page, "Imported 2 line(s)")
    screens.take(page, "import-done")

    # The exceptions: a status mismatch (ours ambiguous) and a line that is not ours.
    page.get_by_text("Work the exceptions").click()
    page.wait_for_selector("#result_list")
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 2
    assert "Status mismatch" in page.inner_text("#result_list")
    assert "On the statement, not ours" in page.inner_text("#result_list")
    assert "Status mismatch" in rows.first.inner_text()  # actionable first
    layout = page.evaluate(
        """() => {
        const results = document.querySelector('#result_list').closest('.results');
        return {page: document.documentElement.scrollWidth, inner: results.scrollWidth,
                client: results.clientWidth};
    }"""
    )
    assert layout["page"] <= 1400 and layout["inner"] <= layout["client"], layout
    screens.take(page, "exceptions")

    # Propose the outcome the statement proves.
    page.locator("#result_list tbody tr", has_text="Status mismatch").locator("th a").click()
    page.get_by_text("Propose a resolution from this line…").click()
    page.wait_for_selector("[data-testid=propose-from-line]")
    assert ambiguous_payout.internal_reference in page.inner_text("[data-testid=line-summary]")
    page.check("#id_checked")
    screens.take(page, "propose")
    page.get_by_role("button", name="Propose successful").click()
    _message_shown(page, "Nothing moves until a different finance approver")

    # Clear the line that is not ours, with a note.
    page.goto(f"{base}/admin/reconciliation/reconciliationitem/?state=open")
    page.locator("#result_list tbody tr", has_text="not ours").locator("th a").click()
    page.get_by_text("Clear with a note…").click()
    page.fill("#id_reason", "POS settlement of the card product, not a payout")
    page.get_by_role("button", name="Clear with this note").click()
    _message_shown(page, "Exception cleared.")
    screens.take(page, "cleared")

    # The payout has not moved yet.
    assert in_thread(lambda: Payout.objects.get(pk=ambiguous_payout.pk).status) == "ambiguous"

    # A second person approves.
    browser_page.clear_cookies()
    _log_in(page, base, "approver")
    page.goto(f"{base}/admin/reconciliation/reconciliationitem/?state=proposed")
    page.locator("#result_list tbody tr").first.locator("th a").click()
    page.get_by_text("Review the proposed resolution…").click()
    screens.take(page, "review")
    page.fill("#id_note", "NIP 00 on the bank's outward report")
    page.get_by_role("button", name=re.compile("Approve and settle")).click()
    _message_shown(page, "is now successful")
    screens.take(page, "payout-settled")

    # The import is complete: every line matched or explained.
    run_id = in_thread(lambda: ReconciliationItem.objects.values_list("run_id", flat=True).first())
    page.goto(f"{base}/admin/reconciliation/reconciliationrun/{run_id}/change/")
    assert "Every line is matched or explained." in page.inner_text("[data-testid=run-verdict]")
    screens.take(page, "run-complete")

    # The dashboard opens on the mode that has payouts (test here), says so, and fits.
    page.goto(f"{base}/admin/reconciliation/reconciliationrun/dashboard/")
    assert "TEST MODE" in page.inner_text("[data-testid=dashboard-mode-banner]")
    assert "yesterday, " in page.inner_text("[data-testid=dashboard-day-table]").lower()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    screens.take(page, "dashboard")

    # The audit trail shows both people's acts.
    page.goto(f"{base}/admin/audit/auditrecord/?object_type__exact=payouts.payout")
    trail = page.inner_text("#result_list")
    assert "payouts.payout.resolution_propose" in trail
    assert "payouts.payout.resolution_approve" in trail
    screens.take(page, "audit-trail")

    payout = in_thread(lambda: Payout.objects.get(pk=ambiguous_payout.pk))
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.nip_session_id == "999058261120101500000000004242"
    actions = in_thread(lambda: set(AuditRecord.objects.values_list("action", flat=True)))
    assert {
        "reconciliation.reconciliationrun.import",
        "reconciliation.reconciliationitem.propose_resolution",
        "reconciliation.reconciliationitem.clear",
        "payouts.payout.resolution_approve",
    } <= actions
    print("\nclerk flow screenshots:\n" + "\n".join(str(path) for path in screens.paths))
