"""Statement parsers on the recorded sample files and on broken ones: exact amounts, Lagos days,
statuses normalised, and a clear message naming the line and column for what cannot be read."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from reconciliation.formats import (
    FORMATS,
    StatementParseError,
    amount_from_kobo,
    amount_from_naira,
    format_get,
    statement_parse,
    statement_period,
)
from reconciliation.models import StatementFormat, StatementStatus
from tests.reconciliation.conftest import NIP_SAMPLE, PAYSTACK_SAMPLE

PAYSTACK = format_get(StatementFormat.PAYSTACK_TRANSFERS)
NIP = format_get(StatementFormat.NIP_SETTLEMENT)


def test_every_format_choice_has_a_spec() -> None:
    assert set(FORMATS) == set(StatementFormat.values)


def test_paystack_sample_is_read_line_by_line() -> None:
    lines = statement_parse(spec=PAYSTACK, content=PAYSTACK_SAMPLE.read_bytes())

    assert [line.line_number for line in lines] == list(range(2, 11))
    first = lines[0]
    assert first.reference == "po_20261120_recon_matched_01"
    assert first.provider_reference == "TRF_k2v8m1q9xq3d"
    assert first.amount == Decimal("5000.00")
    assert first.status == StatementStatus.SUCCESSFUL
    assert first.raw["Recipient"] == "ADAEZE OKAFOR"
    assert first.raw["Account Number"] == "0123456789"
    assert lines[1].amount == Decimal("2500.50")
    assert lines[3].status == StatementStatus.FAILED  # "reversed"
    assert lines[3].status_raw == "reversed"
    assert lines[7].status == StatementStatus.PENDING
    assert lines[6].reference == ""  # a transfer made outside our service


def test_a_utc_time_after_2330_lands_on_the_next_lagos_day() -> None:
    lines = statement_parse(spec=PAYSTACK, content=PAYSTACK_SAMPLE.read_bytes())

    assert statement_period(lines) == (date(2026, 11, 20), date(2026, 11, 20))


def test_nip_sample_reads_naira_with_separators_and_nip_codes() -> None:
    lines = statement_parse(spec=NIP, content=NIP_SAMPLE.read_bytes())

    assert [line.amount for line in lines] == [
        Decimal("5000.00"),
        Decimal("2500.00"),
        Decimal("10000.00"),
        Decimal("7500.00"),
    ]
    assert [line.status for line in lines] == [
        StatementStatus.SUCCESSFUL,
        StatementStatus.FAILED,  # 51: insufficient funds
        StatementStatus.SUCCESSFUL,
        StatementStatus.SUCCESSFUL,
    ]
    assert lines[0].session_id == "999058261120091502481516234201"
    assert lines[0].bank == "058"
    assert statement_period(lines) == (date(2026, 11, 20), date(2026, 11, 20))


def test_headers_match_whatever_their_case_spacing_or_byte_order_mark() -> None:
    content = (
        "\ufeffTRANSFER  CODE,amount,STATUS,created at,Reference\n"
        "TRF_x,100,success,2026-11-20 10:00:00,po_x\n"
    ).encode()

    (line,) = statement_parse(spec=PAYSTACK, content=content)

    assert (line.provider_reference, line.amount, line.reference) == (
        "TRF_x",
        Decimal("1.00"),
        "po_x",
    )


def test_a_windows_spreadsheet_export_is_read() -> None:
    content = 'Session ID,Reference,Amount,Status,Value Date\r\n1,po_é,"1,000.00",00,20/11/2026\r\n'

    (line,) = statement_parse(spec=NIP, content=content.encode("cp1252"))

    assert line.reference == "po_é"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"Reference,Amount,Status,Date\n", "lacks the column(s) provider_reference"),
        (
            b"Transfer Code,Amount,Status,Date\nTRF_1,12.5,success,2026-11-20\n",
            "line 2, column 'Amount': '12.5' must be a whole number of kobo",
        ),
        (
            b"Transfer Code,Amount,Status,Date\nTRF_1,1e5,success,2026-11-20\n",
            "line 2, column 'Amount'",
        ),
        (
            b"Transfer Code,Amount,Status,Date\nTRF_1,100,done,2026-11-20\n",
            "line 2, column 'Status': 'done' is not a status this format knows",
        ),
        (
            b"Transfer Code,Amount,Status,Date\nTRF_1,100,success,yesterday\n",
            "line 2, column 'Date'",
        ),
        (
            b"Transfer Code,Amount,Status,Date\nTRF_1,0,success,2026-11-20\n",
            "must be more than zero",
        ),
        (
            b"Transfer Code,Amount,Status,Date\n,100,success,2026-11-20\n",
            "line 2, column 'Transfer Code': is empty",
        ),
        (b"Transfer Code,Amount,Status,Date\n\n", "the statement has no lines"),
        (b"\x00\x01binary", "not a CSV text file"),
        (
            b"Transfer Code,Amount,Status,Date\nTRF_1,100,success,9999-12-31T23:59:59-05:00\n",
            "line 2, column 'Date': '9999-12-31T23:59:59-05:00' is out of range",
        ),
        (
            b"Transfer Code,Amount,Status,Date\nTRF_1,100,success,0001-01-01T00:00:00+05:00\n",
            "line 2, column 'Date': '0001-01-01T00:00:00+05:00' is out of range",
        ),
        (
            b"Transfer Code,Amount,Status,Date,Amount\nTRF_1,100,success,2026-11-20,200\n",
            "file: the header names the column 'Amount' twice",
        ),
        (
            b"Transfer Code,Note,Amount,Status,Date, note \nTRF_1,a,100,success,2026-11-20,b\n",
            "file: the header names the column 'note' twice",
        ),
    ],
)
def test_what_cannot_be_read_is_refused_with_the_line_and_column(
    content: bytes, message: str
) -> None:
    with pytest.raises(StatementParseError) as raised:
        statement_parse(spec=PAYSTACK, content=content)

    assert message in raised.value.message
    assert raised.value.status == 400


@pytest.mark.parametrize(
    ("text", "amount"),
    [("1", Decimal("0.01")), ("500000", Decimal("5000.00")), ("000123", Decimal("1.23"))],
)
def test_kobo_amounts_are_exact(text: str, amount: Decimal) -> None:
    assert amount_from_kobo(text) == amount


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("5,000.00", Decimal("5000.00")),
        ("₦1,234,567.8", Decimal("1234567.80")),
        ("NGN 0.01", Decimal("0.01")),
        ("1000", Decimal("1000.00")),
    ],
)
def test_naira_amounts_are_exact(text: str, amount: Decimal) -> None:
    assert amount_from_naira(text) == amount


@pytest.mark.parametrize("text", ["1.001", "1,00.00", "-5", "1e3", "NaN", "", "5 000"])
def test_naira_amounts_that_are_not_exact_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        amount_from_naira(text)


def test_an_unknown_format_is_a_400_naming_the_field() -> None:
    with pytest.raises(StatementParseError) as raised:
        format_get("flutterwave")

    assert raised.value.message.startswith("statement_format:")


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("00", "successful"),
        ("96", "pending"),
        ("25", "pending"),
        ("91", "failed"),
        ("34", "failed"),
        ("07", "failed"),
        ("68", "failed"),
    ],
)
def test_nip_statement_codes_read_through_the_outcome_table(code: str, status: str) -> None:
    from reconciliation.formats import NIP_STATUSES

    assert NIP_STATUSES[code] == status


def test_paystack_statement_statuses_are_the_outcome_tables() -> None:
    from payouts.providers.outcomes import PROVIDER_STATUS_OUTCOMES
    from reconciliation.formats import PAYSTACK_STATUSES

    assert set(PAYSTACK_STATUSES) == {*PROVIDER_STATUS_OUTCOMES["paystack"], "successful"}
