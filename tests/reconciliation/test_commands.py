"""``manage.py import_statement``: the same import as the admin's, a one-line summary, the same
file recognised, and a clear non-zero exit for a file it cannot read."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from audit.models import AuditRecord
from reconciliation.models import ReconciliationRun
from tests.reconciliation.conftest import PAYSTACK_SAMPLE

pytestmark = pytest.mark.django_db


def _run(*arguments: str) -> str:
    out = StringIO()
    call_command("import_statement", *arguments, stdout=out)
    return out.getvalue()


def test_imports_and_prints_the_counts(paystack_payouts) -> None:
    output = _run(str(PAYSTACK_SAMPLE), "--format", "paystack_transfers")

    run = ReconciliationRun.objects.get()
    assert f"Imported 9 line(s) from {PAYSTACK_SAMPLE.name} as #{run.pk}" in output
    assert "matched: 4" in output
    assert "ours, not on the statement: 1" in output
    assert run.imported_via == "command"
    record = AuditRecord.objects.get(action="reconciliation.reconciliationrun.import")
    assert record.actor_label == "manage.py import_statement"


def test_json_is_one_object_with_the_counts(paystack_payouts) -> None:
    result = json.loads(_run(str(PAYSTACK_SAMPLE), "--format", "paystack_transfers", "--json"))

    run = ReconciliationRun.objects.get()
    assert result["run_id"] == run.pk
    assert result["duplicate"] is False
    assert result["line_count"] == 9
    assert result["category_counts"]["matched"] == 4
    assert result["ok"] is True


def test_the_same_file_twice_is_reported_and_not_imported(paystack_payouts) -> None:
    _run(str(PAYSTACK_SAMPLE), "--format", "paystack_transfers")

    output = _run(str(PAYSTACK_SAMPLE), "--format", "paystack_transfers")

    assert "was already imported as #" in output
    assert ReconciliationRun.objects.count() == 1


def test_an_explicit_period_widens_the_search_for_missing_payouts(paystack_payouts) -> None:
    _run(
        str(PAYSTACK_SAMPLE),
        "--format",
        "paystack_transfers",
        "--from",
        "2026-11-20",
        "--to",
        "2026-11-21",
    )

    run = ReconciliationRun.objects.get()
    assert run.category_counts["missing"] == 2  # the 21st's payout too


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--format", "paystack_transfers", "--from", "2026-11-20"], "give both --from and --to"),
        (["--format", "paystack_transfers", "--from", "20/11", "--to", "x"], "is not a date"),
        (["--format", "nip_settlement"], "lacks the column(s) session_id"),
    ],
)
def test_errors_exit_non_zero_with_a_message(arguments: list[str], message: str) -> None:
    with pytest.raises(CommandError) as raised:
        _run(str(PAYSTACK_SAMPLE), *arguments)

    assert message in str(raised.value)
    assert ReconciliationRun.objects.count() == 0


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        _run(str(tmp_path / "nope.csv"), "--format", "paystack_transfers")
