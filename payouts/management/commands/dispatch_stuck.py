"""Dispatches the payouts whose dispatch was lost, or one payout now (``--id``); says how many
reserved payouts are still young and when the next would count as stuck. Output and exit status
as every ops command (``core.commands``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser

from payouts.management.commands._one_or_sweep import OneOrSweepCommand
from payouts.models import Payout
from payouts.services import payout_dispatch_now, payouts_dispatch_stuck


class Command(OneOrSweepCommand):
    help = (
        "Dispatch reserved payouts whose dispatch was lost (older than --older-than seconds, "
        "default PAYOUT_DISPATCH_STUCK_AFTER) and processing payouts whose claim went stale, or "
        "with --id one reserved (or stale processing) payout now (recorded in the audit trail). "
        "Dispatch is idempotent. Prints what it considered, what it did and what waits; exits 1 "
        "if any dispatch failed."
    )
    verb, verb_s, verb_ing, verb_plural = "dispatch", "dispatches", "dispatching", "dispatch(es)"

    def add_sweep_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=int, default=None, help="seconds")

    def check_options(self, options: dict[str, Any]) -> None:
        older_than = options["older_than"]
        if older_than is not None and older_than < 0:
            raise CommandError("--older-than must be zero or more seconds")

    def sweep(self, options: dict[str, Any]) -> Any:
        older_than = options["older_than"]
        return payouts_dispatch_stuck(
            older_than=None if older_than is None else timedelta(seconds=older_than),
            limit=options["limit"],
            enqueue=options["enqueue"],
            progress=self.progress("dispatch", unit="payouts"),
        )

    def act_now(self, payout: Payout) -> Any:
        return payout_dispatch_now(payout=payout, actor=self.actor())

    def now_failure(self, result: Any) -> str:
        if result.failed:
            return "the provider could not be reached; the payout waits for the next attempt"
        return ""
