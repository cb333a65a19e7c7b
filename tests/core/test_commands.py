"""``OpsCommand``: result on stdout (or exactly one JSON object), progress on the raw stderr,
INFO logging held back while it runs, the summary printed before a failure exits 1."""

from __future__ import annotations

import getpass
import json
import logging
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from core.commands import CONSOLE_HANDLER, OpsCommand, command_actor

logger = logging.getLogger("payouts.services")


def _console_handler() -> logging.Handler:
    (handler,) = [h for h in logging.getLogger().handlers if h.get_name() == CONSOLE_HANDLER]
    return handler


class SampleCommand(OpsCommand):
    """Counts three items, logs at INFO, and fails when told to."""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--fail", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        self.console_level_seen = _console_handler().level
        logger.info("an INFO line from a service")
        progress = self.progress("sample", unit="items")
        for done in range(1, 4):
            if progress is not None:
                progress(done, 3)
        self.report(
            lines=["first detail", "Counted 3 item(s)."],
            data={"counted": 3, "amount": "1500.00"},
            failure="counting failed" if options["fail"] else "",
        )


def run(*args: str) -> tuple[SampleCommand, str, str]:
    command = SampleCommand()
    out, err = StringIO(), StringIO()
    call_command(command, *args, stdout=out, stderr=err)
    return command, out.getvalue(), err.getvalue()


def test_summary_on_stdout_and_progress_on_stderr() -> None:
    _command, out, err = run()
    assert out == "first detail\nCounted 3 item(s).\n"
    assert err.splitlines()[-1] == f"sample [{'#' * 30}] 3/3 items"


def test_json_is_exactly_one_object_on_stdout() -> None:
    _command, out, err = run("--json")
    assert json.loads(out) == {"counted": 3, "amount": "1500.00", "ok": True}
    assert "sample [" in err


def test_no_progress_leaves_stderr_empty() -> None:
    _command, _out, err = run("--no-progress")
    assert err == ""


def test_failure_prints_the_result_then_raises() -> None:
    out = StringIO()
    with pytest.raises(CommandError, match="counting failed"):
        call_command(SampleCommand(), "--fail", "--json", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue())["ok"] is False


def test_info_logging_is_held_back_while_the_command_runs() -> None:
    handler = _console_handler()
    before = handler.level
    command, _out, _err = run()
    assert command.console_level_seen == logging.WARNING
    assert handler.level == before


def test_verbosity_2_keeps_info_logging() -> None:
    before = _console_handler().level
    command, _out, _err = run("-v", "2")
    assert command.console_level_seen == before < logging.WARNING


def test_command_actor_names_the_command_and_the_os_user() -> None:
    assert command_actor("requery_ambiguous") == (
        f"manage.py requery_ambiguous ({getpass.getuser()})"
    )
