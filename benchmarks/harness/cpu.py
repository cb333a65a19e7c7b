"""CPU accounting from ``/proc``: the ticks each part of the stack used during a load run (the
web and worker process trees, the ``bench`` database's PostgreSQL backends and their parallel
workers, wrk as a child of this process, the rest of the machine), as a share of the machine and
as CPU ms per request (C1)."""

from __future__ import annotations

import os
import re
import resource
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.harness.services import Services

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[str, int, int, str]]:
    """pid -> (comm, ppid, utime + stime ticks, cmdline) for every process we can read."""
    table: dict[int, tuple[str, int, int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        table[int(entry.name)] = (comm, int(fields[1]), int(fields[11]) + int(fields[12]), cmdline)
    return table


def cpu_snapshot(services: Services | None) -> dict[str, Any] | None:
    """CPU ticks used so far by each process of the stack (by part), and the machine's busy
    ticks. wrk's own CPU comes from the children's rusage (it exits within the run)."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        table = _processes()
    except OSError:
        return None
    busy = sum(int(x) for x in first) - int(first[3]) - int(first[4])  # minus idle, iowait
    database = services.cfg.database if services is not None else "bench"
    roots: list[tuple[str, int]] = []
    if services is not None:
        roots = [(services.part(name), process.pid) for name, process in services.processes.items()]
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)

    def tree(root: int) -> set[int]:
        seen, stack = set(), [root]
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            stack.extend(children.get(pid, []))
        return seen

    groups: dict[str, set[int]] = {}
    for part, pid in roots:
        groups.setdefault(part, set()).update(tree(pid))
    pids: dict[int, tuple[str, int]] = {}
    bench_backends = {
        pid
        for pid, (comm, _, _, cmdline) in table.items()
        if comm == "postgres" and f" {database} " in f"{cmdline} "
    }
    for pid, (_comm, _, ticks, cmdline) in table.items():
        group = next((name for name, members in groups.items() if pid in members), None)
        leader = re.search(r"parallel worker for PID (\d+)", cmdline)
        if group is None and (
            pid in bench_backends or (leader and int(leader.group(1)) in bench_backends)
        ):
            group = "postgres_bench"  # a bench backend, or a parallel worker of one
        if group is not None:
            pids[pid] = (group, ticks)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "pids": pids,
        "busy": busy,
        "children_ticks": (usage.ru_utime + usage.ru_stime) * CLOCK_TICKS,
        "at": time.monotonic(),
    }


def cpu_share(
    before: dict[str, Any] | None, after: dict[str, Any] | None, *, requests: int
) -> dict[str, Any] | None:
    """Each part's share of the machine during the run (% of all cores), the rest of the
    machine's busy time ("other": other tenants, the kernel), and CPU ms per request.
    Per process: a process that exited during the run is not counted, one that started is."""
    if not before or not after:
        return None
    seconds = after["at"] - before["at"]
    capacity = seconds * CLOCK_TICKS * (os.cpu_count() or 1)
    if capacity <= 0:
        return None
    parts = {"web": 0.0, "worker": 0.0, "postgres_bench": 0.0}
    for pid, (group, ticks) in after["pids"].items():
        previous = before["pids"].get(pid)
        base = previous[1] if previous and previous[0] == group else 0
        parts[group] = parts.get(group, 0.0) + max(0, ticks - base)
    parts["wrk"] = max(0.0, after["children_ticks"] - before["children_ticks"])
    busy = after["busy"] - before["busy"]
    share = {name: round(100 * ticks / capacity, 1) for name, ticks in parts.items()}
    share["other"] = round(100 * max(0, busy - sum(parts.values())) / capacity, 1)
    share["idle"] = round(max(0.0, 100 - 100 * busy / capacity), 1)
    per_request = {
        name: round(1000 * ticks / CLOCK_TICKS / requests, 2) if requests else None
        for name, ticks in parts.items()
    }
    return {"percent_of_machine": share, "cpu_ms_per_request": per_request}
