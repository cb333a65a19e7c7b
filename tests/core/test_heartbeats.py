"""Heartbeats: recorded and read through the shared cache (Redis) or files, and the timer."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.heartbeats import (
    heartbeat_age,
    heartbeat_last,
    heartbeat_record,
    heartbeat_store,
    heartbeat_timer_start,
)

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")


@pytest.fixture
def file_store(settings, tmp_path: Path) -> Path:
    settings.HEARTBEAT_STORE = "auto"
    settings.HEARTBEAT_DIR = str(tmp_path / "beats")
    return tmp_path / "beats"


def test_the_local_memory_cache_means_files(file_store: Path) -> None:
    assert heartbeat_store() == "file"


def test_a_heartbeat_is_read_back_from_a_file(file_store: Path) -> None:
    assert heartbeat_last("worker:celery") is None
    heartbeat_record("worker:celery", at=1_800_000_000.25)
    assert heartbeat_last("worker:celery") == 1_800_000_000.25
    assert [path.name for path in file_store.iterdir()] == ["worker_celery.beat"]


def test_the_age_counts_from_the_last_beat(file_store: Path) -> None:
    heartbeat_record("beat", at=time.time() - 10)
    age = heartbeat_age("beat")
    assert age is not None and 9.5 < age < 12
    assert heartbeat_age("never") is None


def test_a_redis_cache_keeps_heartbeats_for_every_host(settings) -> None:
    settings.HEARTBEAT_STORE = "auto"
    settings.CACHES = {"default": {"BACKEND": "core.cache.PooledRedisCache", "LOCATION": REDIS_URL}}
    from django.core.cache import cache

    assert heartbeat_store() == "cache"
    heartbeat_record("worker:webhooks", at=1_800_000_001.5)
    try:
        assert heartbeat_last("worker:webhooks") == 1_800_000_001.5
    finally:
        cache.delete("heartbeat:worker:webhooks")


def test_an_unwritable_store_never_raises(settings, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    settings.HEARTBEAT_STORE = "file"
    settings.HEARTBEAT_DIR = str(blocker / "beats")
    heartbeat_record("worker:celery")
    assert heartbeat_last("worker:celery") is None


def test_the_timer_beats_until_stopped(file_store: Path, settings) -> None:
    settings.HEARTBEAT_INTERVAL_SECONDS = 0.05
    timer = heartbeat_timer_start(lambda: ["worker:celery"])
    try:
        first = _wait_for_beat("worker:celery")
        time.sleep(0.2)
        assert heartbeat_last("worker:celery") > first
    finally:
        timer.stop()
        timer.join(timeout=2)
    assert not timer.is_alive()


def _wait_for_beat(name: str) -> float:
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        last = heartbeat_last(name)
        if last is not None:
            return last
        time.sleep(0.01)
    raise AssertionError(f"{name} never beat")
