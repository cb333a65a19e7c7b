"""Heartbeats: when a background process (a worker pool, beat) last said it was alive, where
every other process can read it.

A heartbeat is a Unix timestamp under a name (``worker:celery``, ``beat``,
``beat-task:payouts-dispatch-round``). It is kept where every process of the deployment
meets:

- the cache, when it is shared (Redis: ``CACHE_URL=redis://…``), so web and workers on
  different hosts agree;
- otherwise files under ``HEARTBEAT_DIR`` (``VAR_DIR/heartbeats``): the embedded topology of
  ``make run`` (local-memory cache, one host) still shares them across its processes.

``HEARTBEAT_STORE`` (``auto``, ``cache`` or ``file``) forces one. ``heartbeat_timer_start``
runs a daemon thread that records a heartbeat every ``HEARTBEAT_INTERVAL_SECONDS``.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

CACHE_KEY_PREFIX = "heartbeat:"
# Heartbeats outlive any staleness threshold by far, then go.
CACHE_TIMEOUT_SECONDS = 7 * 24 * 3600
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")

BEAT_HEARTBEAT = "beat"


def worker_heartbeat_name(queue: str) -> str:
    """The heartbeat of the worker pool consuming ``queue``."""
    return f"worker:{queue}"


def beat_task_heartbeat_name(entry: str) -> str:
    """When beat last sent its schedule entry ``entry``."""
    return f"beat-task:{entry}"


def heartbeat_store() -> str:
    """``cache`` or ``file``: where heartbeats are kept (see the module docstring)."""
    store = str(getattr(settings, "HEARTBEAT_STORE", "auto"))
    if store in ("cache", "file"):
        return store
    backend = settings.CACHES["default"]["BACKEND"]
    return "cache" if "redis" in backend.lower() else "file"


def _file_for(name: str) -> Path:
    return Path(settings.HEARTBEAT_DIR) / f"{_UNSAFE.sub('_', name)[:150]}.beat"


def heartbeat_record(name: str, *, at: float | None = None) -> None:
    """Records that ``name`` is alive at ``at`` (now by default). Never raises: a heartbeat
    that cannot be written shows as a stale one."""
    value = time.time() if at is None else at
    try:
        if heartbeat_store() == "cache":
            cache.set(f"{CACHE_KEY_PREFIX}{name}", value, timeout=CACHE_TIMEOUT_SECONDS)
            return
        path = _file_for(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed into place, so a reader never sees half a timestamp.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".beat-")
        with os.fdopen(handle, "w") as stream:
            stream.write(repr(value))
        os.replace(temporary, path)
    except Exception:  # noqa: BLE001 - a lost heartbeat shows as stale; never break the caller
        logger.warning("heartbeat %s not recorded", name, exc_info=True)


def heartbeat_last(name: str) -> float | None:
    """The last timestamp recorded for ``name``; ``None`` if there is none (or it cannot be
    read)."""
    try:
        if heartbeat_store() == "cache":
            value = cache.get(f"{CACHE_KEY_PREFIX}{name}")
            return None if value is None else float(value)
        return float(_file_for(name).read_text())
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - unreadable counts as never seen
        logger.warning("heartbeat %s unreadable", name, exc_info=True)
        return None


def heartbeat_age(name: str, *, now: float | None = None) -> float | None:
    """Seconds since ``name`` last beat; ``None`` if it never did."""
    last = heartbeat_last(name)
    if last is None:
        return None
    return max(0.0, (time.time() if now is None else now) - last)


class HeartbeatTimer(threading.Thread):
    """A daemon thread recording heartbeats for ``names()`` every ``interval`` seconds until
    ``stop()``; the first at once."""

    def __init__(self, names: Callable[[], Iterable[str]], *, interval: float) -> None:
        super().__init__(name="heartbeat", daemon=True)
        self._names = names
        self._interval = interval
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.is_set():
            for name in self._names():
                heartbeat_record(name)
            self._stopped.wait(self._interval)

    def stop(self) -> None:
        self._stopped.set()


def heartbeat_timer_start(names: Callable[[], Iterable[str]]) -> HeartbeatTimer:
    """Starts a ``HeartbeatTimer`` at ``HEARTBEAT_INTERVAL_SECONDS``."""
    timer = HeartbeatTimer(names, interval=float(settings.HEARTBEAT_INTERVAL_SECONDS))
    timer.start()
    return timer
