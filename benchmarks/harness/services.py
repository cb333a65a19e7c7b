"""Starting and stopping the service's processes for the bench: gunicorn with the bench settings
and every Celery worker line of the Procfile (the money ``worker`` on the default queue, the
``webhooks`` pool on its own queue), each in its own process group, optionally pinned to CPUs
with taskset (BENCH_WEB_CPUS for the web, BENCH_WORKER_CPUS for every worker), the workers
at BENCH_WORKER_NICE's lower CPU priority, logging to
``var/bench/<name>.log``; and waiting until the web answers ``/readyz``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

from benchmarks.harness.config import ROOT, VENV_BIN, WORK, Config

PROCFILE = ROOT / "Procfile"


def procfile_workers() -> dict[str, str]:
    """The Procfile's Celery worker lines (``celery … worker …``): name → command line."""
    workers: dict[str, str] = {}
    for line in PROCFILE.read_text().splitlines():
        name, _, command = line.partition(":")
        words = command.split()
        if not name.startswith("#") and words[:1] == ["celery"] and "worker" in words:
            workers[name.strip()] = command.strip()
    return workers


def worker_env(cfg: Config) -> dict[str, str]:
    """The workers' environment: production settings, the money worker's pool size from
    CELERY_CONCURRENCY (cores by default); the Procfile's lines read their queues from it."""
    return {
        **cfg.service_env("config.settings.production"),
        "CELERY_CONCURRENCY": str(cfg.celery_concurrency),
    }


def worker_commands() -> dict[str, list[str]]:
    """name → the command the bench starts for each Procfile worker line: the line as written
    (its queues, pool and concurrency, expanded by the shell from ``worker_env``), so every
    queue the service publishes to is consumed; without gossip and mingle, as before."""
    return {
        name: ["bash", "-c", f"exec {command} --without-gossip --without-mingle"]
        for name, command in procfile_workers().items()
    }


class Services:
    """gunicorn and the Procfile's Celery workers, each in its own process group."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.processes: dict[str, subprocess.Popen] = {}
        self.logs: list[Any] = []

    def start(self, name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
        cpus = self.cfg.web_cpus if name == "web" else self.cfg.worker_cpus
        if cpus:
            # BENCH_WEB_CPUS / BENCH_WORKER_CPUS: pin each side to its own cores (taskset), so
            # the web's own ceiling shows without the worker competing for the same cores.
            command = ["taskset", "-c", cpus, *command]
        if name != "web" and self.cfg.worker_nice:
            # BENCH_WORKER_NICE: the workers at a lower CPU priority than the web, so a
            # dispatch round never delays a create waiting for a core (docs/scaling.md).
            command = ["nice", "-n", str(self.cfg.worker_nice), *command]
        handle = (WORK / f"{name}.log").open("w")
        self.logs.append(handle)
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[name] = process
        return process

    def start_all(self) -> None:
        cfg = self.cfg
        for name, command in worker_commands().items():
            self.start(name, command, worker_env(cfg))
        self.start(
            "web",
            [str(VENV_BIN / "gunicorn"), "config.wsgi:application", "-c", "config/gunicorn.py"],
            {
                **cfg.service_env("benchmarks.bench_settings"),
                "BIND_ADDRESS": "127.0.0.1",
                "PORT": str(cfg.port),
                "WEB_CONCURRENCY": str(cfg.web_concurrency),
                "GUNICORN_THREADS": str(cfg.web_threads),
                "GUNICORN_TIMEOUT": "30",
            },
        )

    @staticmethod
    def part(name: str) -> str:
        """The part of the stack a process counts as in the CPU figures: the web, or the worker
        (every Celery pool)."""
        return "web" if name == "web" else "worker"

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                tail = (WORK / f"{name}.log").read_text()[-3000:]
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{tail}")

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
        for handle in self.logs:
            handle.close()


def wait_ready(cfg: Config, services: Services, timeout: int = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        services.check_alive()
        try:
            with urllib.request.urlopen(  # noqa: S310
                f"http://127.0.0.1:{cfg.port}/readyz", timeout=5
            ) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError as error:
            # No beat runs here (its rounds would load the measurements): everything else is up.
            if json.loads(error.read() or b"{}").get("message") == "not ready: beat not seen":
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise RuntimeError("the service did not become ready")
