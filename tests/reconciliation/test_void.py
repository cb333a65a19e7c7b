"""Voiding a statement import made by mistake, and the import's mode chosen from the file's
references (never a silent default): service, admin and command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from audit.models import AuditRecord
from core.exceptions import ApplicationError
from merchants.models import Mode
from reconciliation.dashboard import finance_dashboard
from reconciliation.models import ReconciliationRun
from reconciliation.selectors import exceptions_unresolved, exceptions_unresolved_count
from reconciliation.services import (
    statement_import,
    statement_import_void,
    statement_mode_detect,
)
from tests.audit.factories import StaffUserFactory
from tests.reconciliation.conftest import PAYSTACK_SAMPLE

pytestmark = pytest.mark.django_db

REASON = "Imported in test mode by mistake; re-importing as live"
RUNS_URL = "admin:reconciliation_reconciliationrun_changelist"
IMPORT_URL = "admin:reconciliation_import_statement"
NOT_OURS = b"Reference,Transfer Code,Amount,Status,Date\nEXT-1,TRF_x_1,100,success,2026-11-20\n"


def _import(mode: str | None = None, content: bytes | None = None) -> ReconciliationRun:
    return statement_import(
        content=content or PAYSTACK_SAMPLE.read_bytes(),
        file_name=PAYSTACK_SAMPLE.name,
        statement_format="paystack_transfers",
        mode=mode,
        actor_label="test",
    ).run


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- voiding -----------------------------------------------------------------------------------


def test_voiding_takes_the_lines_out_of_the_queue_and_the_dashboard(
    paystack_payouts, operator
) -> None:
    run = _import(Mode.LIVE)
    assert exceptions_unresolved(run_id=run.pk).exists()
    day = run.period_end

    statement_import_void(run_id=run.pk, reason=REASON, voided_by=operator)

    run.refresh_from_db()
    assert run.voided_at is not None
    assert run.voided_by == operator
    assert run.void_reason == REASON
    assert not exceptions_unresolved(run_id=run.pk).exists()
    assert exceptions_unresolved_count(mode=Mode.LIVE) == {"open": 0, "proposed": 0}
    assert finance_dashboard(day=day, mode=Mode.LIVE).exceptions == {"open": 0, "proposed": 0}
    record = AuditRecord.objects.get(action="reconciliation.reconciliationrun.void")
    assert record.reason == REASON
    assert record.object_id == str(run.pk)


def test_a_voided_file_can_be_imported_again_in_the_right_mode(paystack_payouts, operator):
    wrong = _import(Mode.TEST)
    assert _import(Mode.LIVE).pk == wrong.pk  # "already imported"

    statement_import_void(run_id=wrong.pk, reason=REASON, voided_by=operator)
    again = _import(Mode.LIVE)

    assert again.pk != wrong.pk
    assert again.mode == Mode.LIVE
    assert _import(Mode.LIVE).pk == again.pk  # and once only


def test_voiding_needs_the_import_permission_and_a_reason(paystack_payouts, viewer, operator):
    run = _import(Mode.LIVE)

    with pytest.raises(ApplicationError) as refused:
        statement_import_void(run_id=run.pk, reason=REASON, voided_by=viewer)
    assert refused.value.status == 403
    with pytest.raises(ApplicationError, match="reason"):
        statement_import_void(run_id=run.pk, reason="oops", voided_by=operator)
    run.refresh_from_db()
    assert run.voided_at is None


def test_a_run_is_voided_once(paystack_payouts, operator) -> None:
    run = _import(Mode.LIVE)
    statement_import_void(run_id=run.pk, reason=REASON, voided_by=operator)

    with pytest.raises(ApplicationError) as again:
        statement_import_void(run_id=run.pk, reason=REASON, voided_by=operator)
    assert again.value.status == 409


def test_the_admin_voids_with_a_reason(paystack_payouts, operator) -> None:
    run = _import(Mode.LIVE)
    client = _client(operator)
    url = reverse(RUNS_URL)

    confirm = client.post(url, {"action": "void_selected", "_selected_action": [run.pk]})
    assert confirm.status_code == 200
    assert PAYSTACK_SAMPLE.name in confirm.content.decode()
    client.post(
        url,
        {
            "action": "void_selected",
            "_selected_action": [run.pk],
            "confirm": "yes",
            "reason": REASON,
        },
    )

    run.refresh_from_db()
    assert run.void_reason == REASON
    listing = client.get(url).content.decode()
    assert 'data-testid="run-voided"' in listing


def test_the_admin_refuses_voiding_to_a_viewer(paystack_payouts, viewer) -> None:
    run = _import(Mode.LIVE)

    _client(viewer).post(
        reverse(RUNS_URL),
        {
            "action": "void_selected",
            "_selected_action": [run.pk],
            "confirm": "yes",
            "reason": REASON,
        },
    )

    run.refresh_from_db()
    assert run.voided_at is None


# --- the mode --------------------------------------------------------------------------------


def test_the_mode_comes_from_the_files_references(paystack_payouts) -> None:
    assert (
        statement_mode_detect(
            content=PAYSTACK_SAMPLE.read_bytes(), statement_format="paystack_transfers"
        )
        == Mode.LIVE
    )
    assert _import().mode == Mode.LIVE


def test_a_file_naming_none_of_ours_needs_a_mode() -> None:
    with pytest.raises(ApplicationError, match="^mode: "):
        _import(content=NOT_OURS)

    assert not ReconciliationRun.objects.exists()
    assert _import(Mode.TEST, content=NOT_OURS).mode == Mode.TEST


def test_the_upload_form_defaults_to_the_files_mode(paystack_payouts, operator) -> None:
    client = _client(operator)

    client.post(
        reverse(IMPORT_URL),
        {
            "statement_file": SimpleUploadedFile(
                PAYSTACK_SAMPLE.name, PAYSTACK_SAMPLE.read_bytes(), "text/csv"
            ),
            "statement_format": "paystack_transfers",
            "mode": "",
        },
    )

    assert ReconciliationRun.objects.get().mode == Mode.LIVE


def test_the_upload_form_asks_for_the_mode_when_the_file_does_not_say(operator) -> None:
    client = _client(operator)
    form = client.get(reverse(IMPORT_URL)).content.decode()
    assert "From the file" in form

    page = client.post(
        reverse(IMPORT_URL),
        {
            "statement_file": SimpleUploadedFile("x.csv", NOT_OURS, "text/csv"),
            "statement_format": "paystack_transfers",
            "mode": "",
        },
    )

    assert page.status_code == 200
    assert "choose test or live" in page.content.decode()
    assert not ReconciliationRun.objects.exists()


def test_the_command_detects_the_mode_or_asks_for_it(paystack_payouts, tmp_path) -> None:
    out = StringIO()
    call_command(
        "import_statement", str(PAYSTACK_SAMPLE), "--format", "paystack_transfers", stdout=out
    )
    assert ReconciliationRun.objects.get().mode == Mode.LIVE
    path = tmp_path / "external.csv"
    path.write_bytes(NOT_OURS)

    with pytest.raises(CommandError, match="choose test or live"):
        call_command("import_statement", str(path), "--format", "paystack_transfers", stdout=out)
    call_command(
        "import_statement",
        str(path),
        "--format",
        "paystack_transfers",
        "--mode",
        "test",
        stdout=out,
    )
    assert ReconciliationRun.objects.get(file_name="external.csv").mode == Mode.TEST


def test_a_user_with_only_the_import_permission_may_void(paystack_payouts) -> None:
    importer = StaffUserFactory(permissions=["reconciliation.import_statement"])
    run = _import(Mode.LIVE)

    statement_import_void(run_id=run.pk, reason=REASON, voided_by=importer)

    run.refresh_from_db()
    assert run.voided_at is not None


def test_the_import_page_offers_void_and_voids_with_a_reason(paystack_payouts, operator, viewer):
    run = _import(Mode.LIVE)
    change = reverse("admin:reconciliation_reconciliationrun_change", args=[run.pk])
    void = reverse("admin:reconciliation_run_void", args=[run.pk])
    client = _client(operator)
    assert void in client.get(change).content.decode()
    assert void not in _client(viewer).get(change).content.decode()
    assert _client(viewer).post(void, {"confirm": "yes", "reason": REASON}).status_code == 403

    confirm = client.get(void)
    assert PAYSTACK_SAMPLE.name in confirm.content.decode()
    done = client.post(void, {"confirm": "yes", "reason": REASON})

    assert done.status_code == 302
    run.refresh_from_db()
    assert run.void_reason == REASON
    assert void not in client.get(change).content.decode()
