"""The dispatch round task and the debounced wake that publishes it when payouts commit."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis

from payouts import services, tasks
from payouts.services import DispatchRoundReport
from payouts.tasks import DispatchWake


@dataclass
class FakeClock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Publishes:
    """What the wake published: (clock at the publish, countdown or None)."""

    clock: FakeClock
    made: list[tuple[float, float | None]] = field(default_factory=list)
    fail: bool = False

    def apply_async(self, *args: Any, **options: Any) -> None:
        if self.fail:
            raise OSError("broker unreachable")
        self.made.append((self.clock.now, options.get("countdown")))

    def starts(self) -> list[float]:
        """When each published run may start."""
        return [at + (countdown or 0.0) for at, countdown in self.made]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def publishes(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> Publishes:
    recorder = Publishes(clock=clock)
    monkeypatch.setattr(tasks.payouts_dispatch_round_task, "apply_async", recorder.apply_async)
    return recorder


@pytest.fixture
def wake(clock: FakeClock, settings: Any) -> DispatchWake:
    settings.PAYOUT_DISPATCH_WAKE_INTERVAL_MS = 50
    return DispatchWake(clock=clock)


RUN_DELAY = 0.05 + tasks.WAKE_START_MARGIN_SECONDS  # the interval, and the margin past its end


def test_many_commits_in_one_interval_publish_one_run_that_starts_after_the_last(
    wake: DispatchWake, clock: FakeClock, publishes: Publishes
) -> None:
    commits = []
    for _commit in range(40):
        wake()
        commits.append(clock.now)
        clock.now += 0.001  # 40 commits within 40 ms

    assert publishes.made == [(1000.0, pytest.approx(RUN_DELAY))]
    assert publishes.starts()[0] > commits[-1]


def test_a_commit_after_the_interval_opens_the_next(
    wake: DispatchWake, clock: FakeClock, publishes: Publishes
) -> None:
    wake()
    clock.now += 0.01
    wake()  # inside the interval: the run already published takes it
    clock.now += 0.05
    wake()
    assert [at for at, _countdown in publishes.made] == [1000.0, pytest.approx(1000.06)]


def test_every_commit_is_followed_by_a_run_that_starts_after_it(
    wake: DispatchWake, clock: FakeClock, publishes: Publishes
) -> None:
    steps = [0.0, 0.003, 0.02, 0.049, 0.05, 0.051, 0.2, 0.2, 0.26, 0.3, 0.3001]
    for at in steps:
        clock.now = 1000.0 + at
        wake()
        assert any(start > clock.now for start in publishes.starts())
    # Intervals opened at 0, 0.05, 0.2 and 0.26 s.
    assert [at - 1000.0 for at, _countdown in publishes.made] == pytest.approx(
        [0.0, 0.05, 0.2, 0.26]
    )


def test_an_interval_of_zero_publishes_every_commit_at_once(
    wake: DispatchWake, publishes: Publishes, settings: Any
) -> None:
    settings.PAYOUT_DISPATCH_WAKE_INTERVAL_MS = 0
    for _commit in range(3):
        wake()
    assert publishes.made == [(1000.0, None)] * 3


def test_threads_committing_together_publish_once(wake: DispatchWake, publishes: Publishes) -> None:
    barrier = threading.Barrier(16)

    def commit() -> None:
        barrier.wait(timeout=10)
        for _commit in range(20):
            wake()

    threads = [threading.Thread(target=commit) for _thread in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(publishes.made) == 1


def test_processes_sharing_a_redis_cache_share_one_interval(
    publishes: Publishes, settings: Any
) -> None:
    """Two web processes (two wakes) on one Redis: one run per interval between them."""
    redis_url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"Redis at {redis_url} is unreachable ({error})")
        pytest.skip(f"Redis at {redis_url} is unreachable")
    settings.PAYOUT_DISPATCH_WAKE_INTERVAL_MS = 300
    settings.CACHES = {
        "default": {
            "BACKEND": "core.cache.PooledRedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": f"wake{uuid.uuid4().hex[:8]}",
        }
    }
    first, second = DispatchWake(), DispatchWake()

    published = [first(), second(), first(), second()]
    time.sleep(0.35)
    published.append(second())

    assert published == [True, False, False, False, True]
    assert [countdown for _at, countdown in publishes.made] == [pytest.approx(0.32)] * 2


def test_commits_inside_a_known_redis_interval_cost_no_round_trip(
    publishes: Publishes, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that saw the shared interval open (its own or another's) asks Redis nothing
    until the time Redis said it stays open; after that it asks again."""
    redis_url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"Redis at {redis_url} is unreachable ({error})")
        pytest.skip(f"Redis at {redis_url} is unreachable")
    settings.PAYOUT_DISPATCH_WAKE_INTERVAL_MS = 300
    settings.CACHES = {
        "default": {
            "BACKEND": "core.cache.PooledRedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": f"wake{uuid.uuid4().hex[:8]}",
        }
    }
    asked: list[bool] = []
    real = tasks.redis_window_open_for

    def counted(*args: Any, **kwargs: Any) -> tuple[bool, int]:
        answer = real(*args, **kwargs)
        asked.append(answer[0])
        assert 0 < answer[1] <= 300
        return answer

    monkeypatch.setattr(tasks, "redis_window_open_for", counted)
    first, second = DispatchWake(), DispatchWake()

    published = [first(), second(), first(), second(), first(), second()]
    assert published == [True, False, False, False, False, False]
    assert asked == [True, False]  # one round trip each: opened, then found open
    time.sleep(0.35)
    assert [second(), first()] == [True, False]
    assert asked == [True, False, True, False]
    assert [countdown for _at, countdown in publishes.made] == [pytest.approx(0.32)] * 2


def test_a_broker_outage_is_logged_and_never_raises(
    wake: DispatchWake, publishes: Publishes, caplog: pytest.LogCaptureFixture
) -> None:
    publishes.fail = True
    with caplog.at_level(logging.ERROR, logger="payouts.tasks"):
        assert wake() is False
    assert "could not enqueue a dispatch round" in caplog.text


def test_the_round_task_runs_rounds_while_they_are_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fullness = iter([True, True, False, True])
    calls: list[int] = []

    def one_round() -> DispatchRoundReport:
        calls.append(1)
        full = next(fullness)
        return DispatchRoundReport(limit=2, claimed=2 if full else 1)

    monkeypatch.setattr(services, "payouts_dispatch_round", one_round)
    summary = tasks.payouts_dispatch_round_task.run()
    assert len(calls) == 3
    assert summary.count("dispatch_round:") == 3


def test_the_round_task_stops_after_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def one_round() -> DispatchRoundReport:
        calls.append(1)
        return DispatchRoundReport(limit=1, claimed=1)

    monkeypatch.setattr(services, "payouts_dispatch_round", one_round)
    tasks.payouts_dispatch_round_task.run()
    assert len(calls) == tasks.DISPATCH_ROUNDS_PER_RUN


def test_beat_runs_a_dispatch_round(settings: Any) -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["payouts-dispatch-round"]
    assert entry["task"] == "payouts.tasks.payouts_dispatch_round_task"
    assert entry["schedule"].total_seconds() == 5


@pytest.mark.django_db
def test_the_round_task_dispatches_reserved_payouts(funded_wallet, create_payout) -> None:
    payouts = [create_payout().payout for _ in range(3)]
    assert tasks.payouts_dispatch_round_task.run() == (
        "dispatch_round: 3 payout(s) claimed: 3 successful"
    )
    for payout in payouts:
        payout.refresh_from_db()
        assert payout.status == "successful"
