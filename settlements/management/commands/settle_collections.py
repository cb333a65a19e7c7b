"""Settles paid collections now, as the beat does: every merchant with collections due (or one,
``--merchant``), in one mode or both (``--mode``), as at ``--now`` (an ISO instant; the live
schedule decides what is due then). Output and exit status as every ops command
(``core.commands``): a line per settlement, then the one-line summary; exit 1 when any
merchant's run failed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from core.commands import OpsCommand
from merchants.models import Merchant, Mode
from settlements.services import settlements_run


def _instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError as error:
        raise CommandError(f"--now: {text!r} is not an ISO 8601 date and time") from error
    if timezone.is_naive(value):
        value = timezone.make_aware(value)  # a Lagos wall-clock time
    return value


class Command(OpsCommand):
    help = (
        "Settle paid collections into the merchants' wallets now (test mode: every paid "
        "collection; live: those due by the T+1 business-day schedule). The beat does the same "
        "every SETTLEMENT_RUN_SECONDS."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--merchant", type=int, help="only this merchant (id)")
        parser.add_argument(
            "--mode", choices=[Mode.TEST, Mode.LIVE], help="only this mode (default: both)"
        )
        parser.add_argument(
            "--now",
            help="settle as at this instant (ISO 8601; without an offset, Lagos time)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        merchant_id = options.get("merchant")
        if merchant_id is not None and not Merchant.objects.filter(pk=merchant_id).exists():
            raise CommandError(f"merchant {merchant_id} does not exist")
        now = _instant(options["now"]) if options.get("now") else timezone.now()
        modes = (options["mode"],) if options.get("mode") else (Mode.TEST, Mode.LIVE)
        report = settlements_run(
            modes=modes,
            merchant_id=merchant_id,
            now=now,
            progress=self.progress("settle", unit="merchants"),
        )
        self.report(
            lines=report.lines(),
            data=report.as_dict(),
            failure=f"{len(report.errors)} settlement run(s) failed" if report.errors else "",
        )
