"""Statement file formats: how a provider's or bank's CSV maps onto a ``StatementLine``.

A format is a ``StatementFormatSpec``: for each field, the header names it may carry (matched
case- and space-insensitively), how amounts are written (kobo integers or naira decimals), how
statuses read, and which providers' payouts the statement covers. Adding a format is adding one
spec to ``FORMATS`` (and a choice to ``StatementFormat``).

Parsing never guesses: a missing column, an amount that is not exact, a date or a status it does
not know stops the import with a message naming the line and the column, and nothing is stored.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.exceptions import ApplicationError
from core.money import MAX_AMOUNT, minor_units_to_decimal
from payouts.providers.base import TransferOutcome
from payouts.providers.outcomes import (
    NIP_CODE_OUTCOMES,
    nip_code_outcome,
    provider_status_outcome,
    provider_statuses,
)
from reconciliation.models import StatementFormat, StatementStatus

MAX_LINES = 200_000


@dataclass(frozen=True)
class StatementLine:
    line_number: int
    raw: dict[str, str]
    reference: str
    provider_reference: str
    session_id: str
    amount: Decimal
    status: str
    status_raw: str
    at: datetime | None
    account_number: str
    bank: str


@dataclass(frozen=True)
class StatementFormatSpec:
    key: str
    columns: Mapping[str, tuple[str, ...]]  # our field -> accepted header names
    required: tuple[str, ...]
    amount_parser: Callable[[str], Decimal]
    statuses: Mapping[str, str]  # lower-cased word or code -> StatementStatus
    # Providers whose payouts the statement lists (``None``: every provider of the mode).
    provider_names: tuple[str, ...] | None = None
    description: str = ""
    sample_header: tuple[str, ...] = field(default=())


class StatementParseError(ApplicationError):
    def __init__(self, message: str) -> None:
        super().__init__(message, status=400)


# --- Values ------------------------------------------------------------------------------------


_KOBO_RE = re.compile(r"[0-9]{1,18}", re.ASCII)
_NAIRA_RE = re.compile(
    r"[0-9]{1,3}(?:,[0-9]{3})*(?:\.[0-9]{1,2})?|[0-9]+(?:\.[0-9]{1,2})?", re.ASCII
)


def amount_from_kobo(text: str) -> Decimal:
    """``"500000"`` -> ``Decimal("5000.00")``: a whole number of kobo, nothing else."""
    value = text.strip()
    if not _KOBO_RE.fullmatch(value):
        raise ValueError("must be a whole number of kobo")
    return minor_units_to_decimal(int(value))


def amount_from_naira(text: str) -> Decimal:
    """``"5,000.00"``, ``"₦5000"`` or ``"NGN 5000.5"`` -> ``Decimal``; at most two decimals."""
    value = text.strip().removeprefix("₦").removeprefix("NGN").strip()
    if not _NAIRA_RE.fullmatch(value):
        raise ValueError("must be an amount in naira with at most two decimals")
    try:
        return Decimal(value.replace(",", "")).quantize(Decimal("0.01"))
    except InvalidOperation as error:  # pragma: no cover - the pattern admits only digits
        raise ValueError("must be an amount in naira") from error


_DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%d-%m-%Y", "%d-%b-%Y", "%d %b %Y")
_DATETIME_FORMATS = ("%d/%m/%Y %H:%M:%S", "%d/%m/%Y %H:%M", "%d-%b-%Y %H:%M:%S")


def statement_datetime(text: str) -> datetime:
    """An ISO 8601 instant (``Z`` or an offset), or a date / date-time without zone, read as
    Lagos time (a bare date is the start of that day)."""
    value = text.strip()
    parsed: datetime | None = None
    try:
        parsed = parse_datetime(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        parsed = None
    if parsed is None:
        for pattern in _DATETIME_FORMATS:
            try:
                parsed = datetime.strptime(value, pattern)  # noqa: DTZ007 - Lagos below
                break
            except ValueError:
                continue
    if parsed is None:
        for pattern in _DATE_FORMATS:
            try:
                day = datetime.strptime(value, pattern).date()  # noqa: DTZ007 - a date
                parsed = datetime.combine(day, time.min)
                break
            except ValueError:
                continue
    if parsed is None:
        raise ValueError("must be a date (YYYY-MM-DD or DD/MM/YYYY) or an ISO 8601 date-time")
    try:
        if timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed)
        # Read in Lagos time and stored in UTC: both must exist (9999-12-31T23:59:59-05:00
        # is past the last instant a datetime holds once it is moved to either).
        timezone.localtime(parsed)
        parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError("is out of range") from None
    return parsed


# --- Formats -----------------------------------------------------------------------------------


# A statement line is a settled record, so its NIP code reads as a status query's answer
# (``confirmed_by_requery``: 91 is a failure there). A code that held a transfer for suspected
# fraud (34, 35, 63) is a decline on a statement: FAILED, so a held payout shows as a status
# mismatch for finance to resolve. Both tables come from ``payouts.providers.outcomes``.
STATEMENT_STATUS_OF_OUTCOME: dict[TransferOutcome, StatementStatus] = {
    TransferOutcome.SUCCESSFUL: StatementStatus.SUCCESSFUL,
    TransferOutcome.FAILED: StatementStatus.FAILED,
    TransferOutcome.PENDING: StatementStatus.PENDING,
    TransferOutcome.HELD: StatementStatus.FAILED,
}

PAYSTACK_STATUSES = {
    **{
        status: STATEMENT_STATUS_OF_OUTCOME[provider_status_outcome("paystack", status)]
        for outcome in (TransferOutcome.SUCCESSFUL, TransferOutcome.FAILED, TransferOutcome.PENDING)
        for status in provider_statuses("paystack", outcome)
    },
    "successful": StatementStatus.SUCCESSFUL,  # the dashboard export's word
}

NIP_STATUSES = {
    "successful": StatementStatus.SUCCESSFUL,
    "success": StatementStatus.SUCCESSFUL,
    "approved": StatementStatus.SUCCESSFUL,
    "failed": StatementStatus.FAILED,
    "reversed": StatementStatus.FAILED,
    "declined": StatementStatus.FAILED,
    "pending": StatementStatus.PENDING,
    # Codes only NIP outward reports carry (no transfer answer does): the credit did not happen.
    **dict.fromkeys(("21", "26", "30", "65", "68", "69", "70"), StatementStatus.FAILED),
    **{
        code: STATEMENT_STATUS_OF_OUTCOME[nip_code_outcome(code, confirmed_by_requery=True)]
        for code in NIP_CODE_OUTCOMES
    },
}

FORMATS: dict[str, StatementFormatSpec] = {
    StatementFormat.PAYSTACK_TRANSFERS: StatementFormatSpec(
        key=StatementFormat.PAYSTACK_TRANSFERS,
        columns={
            "reference": ("reference", "transfer reference"),
            "provider_reference": ("transfer code", "transfer_code", "transfercode"),
            "amount": ("amount", "amount (kobo)", "amount_kobo"),
            "status": ("status",),
            "recipient": ("recipient", "recipient name", "recipient_name"),
            "account_number": ("account number", "recipient account", "account_number"),
            "bank": ("bank", "recipient bank", "bank name", "bank_code"),
            "at": ("date", "created at", "createdat", "transferred at", "created_at"),
        },
        # A transfer made outside our service may lack a reference; a transfer code it always has.
        required=("provider_reference", "amount", "status", "at"),
        amount_parser=amount_from_kobo,
        statuses=PAYSTACK_STATUSES,
        provider_names=("paystack",),
        description="Paystack dashboard → Transfers → Export: amounts in kobo, our reference "
        "in Reference, Paystack's in Transfer Code.",
        sample_header=(
            "Reference",
            "Transfer Code",
            "Amount",
            "Currency",
            "Status",
            "Recipient",
            "Account Number",
            "Bank",
            "Date",
        ),
    ),
    StatementFormat.NIP_SETTLEMENT: StatementFormatSpec(
        key=StatementFormat.NIP_SETTLEMENT,
        columns={
            "session_id": ("session id", "sessionid", "session_id", "nip session id"),
            "reference": (
                "reference",
                "our reference",
                "payment reference",
                "merchant reference",
                "narration reference",
            ),
            "amount": ("amount", "amount (ngn)", "amount_ngn"),
            "status": ("status", "response", "response code", "status code"),
            "at": ("value date", "value_date", "transaction date", "date"),
            "account_number": (
                "beneficiary account",
                "beneficiary account number",
                "account number",
                "beneficiary_account",
            ),
            "bank": ("beneficiary bank", "bank", "beneficiary bank code", "beneficiary_bank"),
        },
        required=("session_id", "amount", "status", "at"),
        amount_parser=amount_from_naira,
        statuses=NIP_STATUSES,
        provider_names=None,
        description="A settlement bank's NIP outward report: the session id, our reference, "
        "the amount in naira, the NIP status (00 = successful) and the value date.",
        sample_header=(
            "Session ID",
            "Reference",
            "Amount",
            "Status",
            "Value Date",
            "Beneficiary Account",
            "Beneficiary Bank",
        ),
    ),
}


def format_get(key: str) -> StatementFormatSpec:
    try:
        return FORMATS[key]
    except KeyError:
        raise StatementParseError(
            f"statement_format: unknown format {key!r}; one of {', '.join(FORMATS)}"
        ) from None


# --- Parsing -----------------------------------------------------------------------------------


def _normalise_header(name: str) -> str:
    return " ".join(name.replace("\ufeff", "").strip().lower().split())


def _column_map(spec: StatementFormatSpec, header: list[str]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for index, name in enumerate(header):
        normalised = _normalise_header(name)
        if normalised and normalised in positions:
            # Each line is kept as read, by column name: a second column of the same name
            # would hide the first one's value, and which one is the amount is a guess.
            raise StatementParseError(f"file: the header names the column {name.strip()!r} twice")
        positions[normalised] = index
    mapping: dict[str, int] = {}
    for name, aliases in spec.columns.items():
        for alias in aliases:
            if alias in positions:
                mapping[name] = positions[alias]
                break
    missing = [name for name in spec.required if name not in mapping]
    if missing:
        wanted = "; ".join(f"{name} ({' / '.join(spec.columns[name])})" for name in missing)
        raise StatementParseError(f"file: the header lacks the column(s) {wanted}")
    return mapping


def file_text(content: bytes) -> str:
    """The file's text: UTF-8 (with or without a byte-order mark), else Windows-1252, which is
    what a spreadsheet saves as "CSV" on Windows."""
    if b"\x00" in content:
        raise StatementParseError("file: not a CSV text file")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return content.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise StatementParseError("file: not readable as UTF-8 or Windows-1252 text")


def statement_parse(*, spec: StatementFormatSpec, content: bytes) -> list[StatementLine]:
    """Every data line of the file, in file order (line numbers count the header as line 1)."""
    reader = csv.reader(io.StringIO(file_text(content), newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise StatementParseError("file: the file is empty") from None
    except csv.Error as error:
        raise StatementParseError(f"file: line 1 is not valid CSV ({error})") from None
    mapping = _column_map(spec, header)
    lines: list[StatementLine] = []
    try:
        for row in reader:
            line_number = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(lines) >= MAX_LINES:
                raise StatementParseError(f"file: more than {MAX_LINES} lines; split the file")
            lines.append(_line_parse(spec, mapping, header, row, line_number))
    except csv.Error as error:
        raise StatementParseError(
            f"file: line {reader.line_num} is not valid CSV ({error})"
        ) from None
    if not lines:
        raise StatementParseError("file: the statement has no lines")
    return lines


def _line_parse(
    spec: StatementFormatSpec,
    mapping: dict[str, int],
    header: list[str],
    row: list[str],
    line_number: int,
) -> StatementLine:
    def cell(name: str) -> str:
        index = mapping.get(name)
        if index is None or index >= len(row):
            return ""
        return row[index].strip()

    def fail(name: str, problem: str) -> StatementParseError:
        column = header[mapping[name]].strip() if name in mapping else name
        return StatementParseError(f"line {line_number}, column {column!r}: {problem}")

    for name in spec.required:
        if not cell(name):
            raise fail(name, "is empty")
    try:
        amount = spec.amount_parser(cell("amount"))
    except ValueError as error:
        raise fail("amount", f"{cell('amount')!r} {error}") from None
    if amount <= 0 or amount > MAX_AMOUNT:
        raise fail("amount", "must be more than zero and at most the largest payout")
    status_raw = cell("status")
    status = spec.statuses.get(status_raw.lower())
    if status is None:
        raise fail("status", f"{status_raw!r} is not a status this format knows")
    try:
        at = statement_datetime(cell("at"))
    except ValueError as error:
        raise fail("at", f"{cell('at')!r} {error}") from None
    raw = {
        (name.strip() or f"column {index + 1}"): (row[index] if index < len(row) else "")
        for index, name in enumerate(header)
    }
    return StatementLine(
        line_number=line_number,
        raw=raw,
        reference=cell("reference")[:100],
        provider_reference=cell("provider_reference")[:100],
        session_id=cell("session_id")[:64],
        amount=amount,
        status=status,
        status_raw=status_raw[:50],
        at=at,
        account_number=cell("account_number")[:20],
        bank=cell("bank")[:150],
    )


def statement_period(lines: list[StatementLine]) -> tuple[date, date]:
    """The first and last Lagos day the lines fall on."""
    days = [timezone.localtime(line.at).date() for line in lines if line.at is not None]
    return min(days), max(days)
