"""The load generators: wrk driven by ``benchmarks/lua/bench.lua``, closed loop (each connection
sends its next request when the last is answered) or open loop (``Run.rate``: send slots at a
fixed rate, a send after its slot counted as late), with the CPU each part used during the run;
and single JSON requests to the service (urllib) for priming, bulk and list totals."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchmarks.harness.config import LUA, ROOT, WORK, Config, log
from benchmarks.harness.cpu import cpu_share, cpu_snapshot

if TYPE_CHECKING:
    from benchmarks.harness.services import Services


@dataclass
class Run:
    name: str
    mode: str
    path: str
    keys: str
    expect: int
    duration: int
    connections: int
    rate: float = 0.0
    replay_pool: int = 0
    tag: str = ""
    threads: int = 0  # 0: one per core (up to 4)
    trace: bool = False  # requests carry X-Bench-Trace (benchmarks/trace.py)


def trace_tag(cfg: Config, spec: Run) -> str:
    """The X-Bench-Trace value of a traced run: its trace lines carry it."""
    return f"{spec.name}-{cfg.salt}"


def wrk(cfg: Config, spec: Run, services: Services | None = None) -> dict[str, Any]:
    out = WORK / f"wrk-{spec.name}.json"
    out.unlink(missing_ok=True)
    threads = spec.threads or cfg.threads
    env = {
        **os.environ,
        "BENCH_MODE": spec.mode,
        "BENCH_PATH": spec.path,
        "BENCH_KEYS": str(WORK / spec.keys),
        "BENCH_RUN": spec.tag or f"{spec.name}-{cfg.salt}",
        "BENCH_REPLAY": str(spec.replay_pool),
        "BENCH_RATE": str(spec.rate),
        "BENCH_THREADS": str(threads),
        "BENCH_OUT": str(out),
        "BENCH_TRACE_RUN": trace_tag(cfg, spec) if spec.trace else "",
    }
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{spec.connections}",
        f"-d{spec.duration}s",
        "--timeout",
        "10s",
        "-s",
        str(LUA),
        f"http://127.0.0.1:{cfg.port}{spec.path}",
    ]
    load_before = os.getloadavg()[0]
    cpu_before = cpu_snapshot(services)
    with (WORK / "wrk.log").open("a") as handle:
        handle.write(f"\n### {spec.name}: {' '.join(command)}\n")
        handle.flush()
        subprocess.run(
            command,
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=spec.duration + 120,
            check=True,
        )
    cpu_after = cpu_snapshot(services)
    data = json.loads(out.read_text())
    data["load_average_1m"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    data["cpu"] = cpu_share(cpu_before, cpu_after, requests=data["requests"])
    data["threads"] = threads
    statuses = {int(code): count for code, count in data["statuses"].items()}
    data["statuses"] = statuses
    data["unexpected"] = sum(count for code, count in statuses.items() if code != spec.expect)
    data["server_errors"] = sum(count for code, count in statuses.items() if code >= 500)
    data["connections"] = spec.connections
    data["path"] = spec.path
    log(
        f"{spec.name}: {data['rps']:.1f} req/s, p50 {data['p50_ms']:.1f} ms, "
        f"p99 {data['p99_ms']:.1f} ms, statuses {statuses}"
    )
    return data


def http_post_json(
    cfg: Config, path: str, key: str, body: bytes, *, timeout: int = 120
) -> tuple[int, dict[str, Any]]:
    """POSTs a JSON body to the service with a secret key; the status and the decoded answer."""
    request = urllib.request.Request(  # noqa: S310 - loopback URL built here
        f"http://127.0.0.1:{cfg.port}{path}",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}


def http_get_json(cfg: Config, path: str, key: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(  # noqa: S310 - loopback URL built here
        f"http://127.0.0.1:{cfg.port}{path}", headers={"Authorization": f"Bearer {key}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")
