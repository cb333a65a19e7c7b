"""gunicorn with config/gunicorn.py stops promptly and quietly on each stop signal sent to its
master (SIGINT and SIGQUIT make the master send SIGQUIT to its workers; SIGTERM is graceful)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.service_process import ROOT, free_port, wait_for

STOP_BUDGET_SECONDS = 15  # gunicorn's graceful_timeout (30 s) ends in SIGKILL

pytestmark = [pytest.mark.multiprocess]


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM, signal.SIGQUIT])
def test_the_web_stops_promptly_and_without_errors(stop_signal: int, tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "WEB_CONCURRENCY": "2",
        "VAR_DIR": str(tmp_path / "var"),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
    }
    log_path = tmp_path / "web.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(  # noqa: S603 - the repository's own server
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "-c",
                "config/gunicorn.py",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", timeout=60)
        # Every worker serving, not one still loading the application: the stop is timed from a
        # service that is up.
        deadline = time.monotonic() + 30
        while log_path.read_text().count("Started server process") < 2:
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        process.send_signal(stop_signal)
        returncode = process.wait(timeout=STOP_BUDGET_SECONDS)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = log_path.read_text()
    assert returncode == 0, output
    assert "[ERROR]" not in output, output
