"""The profile of the create path: py-spy samples every gunicorn worker during two extra create
runs (wall clock, and GIL-holding only), summarised as the top frames by own time and the
project's functions by inclusive time, counting only samples inside a request."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.config import PAYOUTS_PATH, ROOT, VENV_BIN, WORK, Config
from benchmarks.harness.load import Run, wrk
from benchmarks.harness.services import Services


def profile_create(cfg: Config, services: Services, results: dict[str, Any]) -> None:
    """py-spy samples every gunicorn worker during two extra create runs (not measured ones):
    wall clock (where a request's time goes, waits included) and GIL-holding only (where the
    Python CPU goes)."""
    py_spy = VENV_BIN / "py-spy"
    if not cfg.profile or not py_spy.exists():
        results["profile"] = {"skipped": "BENCH_PROFILE=0 or py-spy not installed"}
        return
    duration = max(6, cfg.duration - 4)
    results["profile"] = {}
    for kind, extra in (("wall", []), ("gil", ["--gil"])):
        raw = WORK / f"profile-{kind}.raw"
        raw.unlink(missing_ok=True)
        with (WORK / f"py-spy-{kind}.log").open("w") as spy_log:
            spy = subprocess.Popen(
                [
                    str(py_spy),
                    "record",
                    "--pid",
                    str(services.processes["web"].pid),
                    "--subprocesses",
                    "--rate",
                    "200",
                    "--duration",
                    str(duration),
                    "--format",
                    "raw",
                    "--output",
                    str(raw),
                    "--nonblocking",
                    *extra,
                ],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=spy_log,
            )
            time.sleep(1)
            run_data = wrk(
                cfg,
                Run(
                    f"profile_create_{kind}",
                    "create",
                    PAYOUTS_PATH,
                    "keys-spread.txt",
                    202,
                    duration,
                    cfg.connections,
                ),
                services,
            )
            try:
                spy.wait(timeout=60)
            except subprocess.TimeoutExpired:
                spy.kill()
        results["runs"][f"profile_create_{kind}"] = run_data
        if raw.exists():
            results["profile"][kind] = summarise_profile(raw)
        else:
            results["profile"][kind] = {"skipped": (WORK / f"py-spy-{kind}.log").read_text()[-500:]}


def _frame_name(frame: str) -> str:
    # py-spy raw frames look like "function (path/to/file.py:123)"
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    path, _, _line = where.rpartition(":")
    for marker in ("site-packages/", str(ROOT) + "/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{name} ({path})"


def summarise_profile(raw: Path, top: int = 20) -> dict[str, Any]:
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    request_samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_frame_name(frame) for frame in stack.split(";") if " (" in frame]
        if not frames:
            continue
        # Only samples inside a request (the workers also idle in their accept loop).
        if not any(frame.split(" (")[0].endswith("get_response") for frame in frames):
            continue
        request_samples += count
        total += count
        for name in set(frames):
            inclusive[name] = inclusive.get(name, 0) + count
        own[frames[-1]] = own.get(frames[-1], 0) + count

    def table(counts: dict[str, int]) -> list[dict[str, Any]]:
        ranked = sorted(counts.items(), key=lambda item: item[1], reverse=True)[:top]
        return [{"frame": name, "pct": round(100 * n / total, 1)} for name, n in ranked]

    ours = {
        name: n
        for name, n in inclusive.items()
        if name.split("(")[-1].startswith(("payouts/", "wallets/", "core/", "merchants/"))
    }
    return {
        "samples_in_requests": request_samples,
        "top_self": table(own),
        "top_inclusive_project": table(ours),
    }
