"""A real Celery worker process on Redis or RabbitMQ for end-to-end tests, and this process's
publishing side pointed at the same broker.

The pieces, used together by ``celery_worker_running`` or one by one by the fault tests:

- ``BROKERS`` and ``broker_url_for(kind, redis_url=…)``: the brokers the end-to-end tests run
  on (the ``celery_broker`` fixture of tests/conftest.py parametrizes a test over them): Redis,
  and RabbitMQ at ``TEST_RABBITMQ_URL`` (default ``amqp://guest:guest@127.0.0.1:5672//``) with
  the production settings for it (``config.celery_broker``: quorum queues, publisher confirms).
- ``unavailable_for(subject)``: the skip-or-fail rule. A missing Redis skips the test, except
  under ``REQUIRE_POSTGRES=1`` (CI), where it fails it; a missing RabbitMQ fails it under
  ``CI=true`` too.
- ``broker_require`` (``redis_require``, ``rabbitmq_require``): the checks that call it.
- ``celery_publishing_to``: ``celery_app.conf`` (broker URL, transport options, queue types,
  routes, default queue) points at the test broker and a queue of the test's own, or keeps the
  project's routing (``CELERY_TASK_ROUTES``) with each of its queues renamed to one of the
  test's own; restored afterwards and the queues removed from the broker (Redis: their keys;
  RabbitMQ: the queue and its exchange, deleted through kombu, as the broker here has no
  management plugin to create a virtual host per test).
- ``worker_environment`` and ``celery_worker_start``: ``celery -A config.celery_app worker`` as
  a subprocess against the pytest test database, consuming a given queue under a unique node
  name, started once its log says it is ready.
- ``procfile_workers_running``: the Procfile's own worker lines (``worker``, ``webhooks``), each
  run as written (its pool, its concurrency) on queues of the test's own.
- ``celery_client_reset``: makes the publishing side follow a changed configuration.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from django.conf import settings
from django.db import connection
from kombu import Connection

from config.celery_app import app as celery_app
from config.celery_broker import amqp_celery_config, broker_is_amqp

Unavailable = Callable[[str], None]

WORKER_READY_SECONDS = 30
STOP_SECONDS = 15

RABBITMQ_URL = os.environ.get("TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672//")
BROKERS = ("redis", "rabbitmq")
# The settings a RabbitMQ broker gets in production (config/settings/base.py), for this process
# while it publishes to one; every other key of the Celery section is the same for both brokers.
AMQP_CONFIG = amqp_celery_config(connect_timeout=2.0, publish_timeout=5.0)


def broker_url_for(kind: str, *, redis_url: str) -> str:
    """The URL of broker ``kind`` (one of ``BROKERS``): ``redis_url``, or ``RABBITMQ_URL``."""
    if kind == "redis":
        return redis_url
    if kind == "rabbitmq":
        return RABBITMQ_URL
    raise ValueError(f"unknown broker {kind!r}")


def unavailable_for(subject: str) -> Unavailable:
    """``unavailable(reason)`` for ``subject``: skips the test, or fails it under
    ``REQUIRE_POSTGRES=1``."""

    def unavailable(reason: str) -> None:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{subject} cannot run under REQUIRE_POSTGRES=1: {reason}")
        pytest.skip(reason)

    return unavailable


def redis_require(url: str, *, unavailable: Unavailable) -> None:
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        unavailable(f"Redis at {url} is unreachable ({error})")


def rabbitmq_require(url: str, *, unavailable: Unavailable) -> None:
    """RabbitMQ answers at ``url``; else the test is skipped, or failed under ``CI=true`` (and,
    through ``unavailable``, under ``REQUIRE_POSTGRES=1``)."""
    try:
        with Connection(url, connect_timeout=2) as probe:
            probe.ensure_connection(max_retries=1)
    except Exception as error:  # kombu raises the transport's own errors
        reason = f"RabbitMQ at {url} is unreachable ({error})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"RabbitMQ tests cannot run under CI=true: {reason}")
        unavailable(reason)


def broker_require(url: str, *, unavailable: Unavailable) -> None:
    if broker_is_amqp(url):
        rabbitmq_require(url, unavailable=unavailable)
    else:
        redis_require(url, unavailable=unavailable)


def wait_for(predicate: Callable[[], Any], *, timeout: float, what: str, step: float = 0.1) -> Any:
    """The first truthy value of ``predicate()``, polled every ``step`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


# --- This process: the publishing side ---------------------------------------------------------


def celery_client_reset() -> None:
    """Makes the publishing side of this process follow a changed ``broker_url``,
    ``broker_transport_options`` or ``task_routes``, keeping every registered task.

    The app's connection pool and its AMQP helper (producer pool, queues and router, built once
    from the settings) are dropped and built again on the next publish. ``app.close()`` is not
    used: it also unregisters the app, and a ``shared_task`` imported after that is never
    attached to it (``NotRegistered`` on ``delay``). Nor are the old pools force-closed: kombu
    keeps one pool per broker URL for the whole process and would hand the closed pool back
    when a later test switches to that URL again ("Acquire on closed pool").
    """
    celery_app._pool = None
    celery_app.__dict__.pop("amqp", None)


def unique_queue(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def redis_queue_remove(url: str, queue: str) -> None:
    """Deletes the queue, its bindings, and messages of it that a killed worker left
    unacknowledged."""
    client = redis.Redis.from_url(url)
    client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    for tag, payload in (client.hgetall("unacked") or {}).items():
        if queue.encode() in payload:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)


def rabbitmq_queue_remove(url: str, queue: str) -> None:
    """Deletes the queue (with any message a killed worker left in it) and its exchange of the
    same name, which Celery declared for it."""
    with Connection(url, connect_timeout=2) as client:
        channel = client.channel()
        try:
            channel.queue_delete(queue)
            channel.exchange_delete(queue)
        finally:
            channel.close()


def unrouted_queue(queue: str) -> str:
    """On RabbitMQ, the queue of a test's own that takes the tasks this process publishes outside
    the test's patterns (its default queue), as they sit unconsumed in the test's Redis database
    on Redis: on a broker shared by everyone, the project's ``celery`` queue is not the test's
    to fill."""
    return f"{queue}-unrouted"


def amqp_worker_env(broker_url: str, queue: str) -> dict[str, str]:
    """On RabbitMQ, a worker's own default and webhooks queues are the queue it consumes: what
    it publishes (a retry, a task it queues) stays in the test. RabbitMQ keeps a retry's
    countdown and sends the retry to its task's route when it runs out, where Redis puts it
    back on the queue it came from. Nothing on Redis."""
    if not broker_is_amqp(broker_url):
        return {}
    return {"CELERY_DEFAULT_QUEUE": queue, "WEBHOOK_QUEUE": queue}


def broker_queue_remove(url: str, queue: str) -> None:
    if broker_is_amqp(url):
        rabbitmq_queue_remove(url, queue)
    else:
        redis_queue_remove(url, queue)


def project_queues() -> list[str]:
    """The project's queues: the default one and every queue ``CELERY_TASK_ROUTES`` names."""
    routes = getattr(settings, "CELERY_TASK_ROUTES", None) or {}
    default = getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "celery")
    return [default, *sorted({route["queue"] for route in routes.values()} - {default})]


@contextlib.contextmanager
def celery_publishing_to(
    broker_url: str,
    *,
    queue: str | None = None,
    task_patterns: Iterable[str] = (),
    queues: Mapping[str, str] | None = None,
    visibility_timeout: int = 300,
) -> Iterator[None]:
    """Meanwhile this process publishes to ``broker_url``: the tasks matching ``task_patterns``
    (e.g. ``"payouts.tasks.*"``) to ``queue``; or, given ``queues`` (a project queue name → a
    test queue name), by the project's own routes, every queue renamed by ``queues``."""
    broker_config: dict[str, Any] = (
        AMQP_CONFIG
        if broker_is_amqp(broker_url)
        else {"broker_transport_options": {"visibility_timeout": visibility_timeout}}
    )
    previous = (
        celery_app.conf.broker_url,
        {key: celery_app.conf.get(key) for key in broker_config},
        celery_app.conf.task_routes,
        celery_app.conf.task_default_queue,
    )
    celery_app.conf.broker_url = broker_url
    celery_app.conf.update(broker_config)
    if queues is not None:
        routes = getattr(settings, "CELERY_TASK_ROUTES", None) or {}
        celery_app.conf.task_routes = {
            pattern: {**route, "queue": queues.get(route["queue"], route["queue"])}
            for pattern, route in routes.items()
        }
        default = getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "celery")
        celery_app.conf.task_default_queue = queues.get(default, default)
        used = list(queues.values())
    else:
        assert queue is not None, "a queue, or a mapping of the project's queues"
        celery_app.conf.task_routes = {pattern: {"queue": queue} for pattern in task_patterns}
        used = [queue]
        if broker_is_amqp(broker_url):
            celery_app.conf.task_default_queue = unrouted_queue(queue)
            used.append(unrouted_queue(queue))
    celery_client_reset()
    try:
        yield
    finally:
        (
            celery_app.conf.broker_url,
            previous_broker_config,
            celery_app.conf.task_routes,
            celery_app.conf.task_default_queue,
        ) = previous
        celery_app.conf.update(previous_broker_config)
        celery_client_reset()
        for name in used:
            broker_queue_remove(broker_url, name)


# --- Other processes: workers (and the fault tests' web servers) ------------------------------


def database_url_for_processes(application_name: str = "") -> str:
    """The pytest test database (``test_<name>``) as a ``DATABASE_URL`` for another process (or
    a psycopg connection): over TCP, or the Unix socket directory of the embedded server."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db["HOST"] or "127.0.0.1"
    query: dict[str, str] = {}
    if host.startswith("/"):  # a socket directory goes in the query, libpq's way
        location = ""
        query["host"] = host
        if db["PORT"]:
            query["port"] = str(db["PORT"])
    else:
        location = f"{host}:{db['PORT'] or 5432}"
    if application_name:
        query["application_name"] = application_name
    encoded = f"?{urlencode(query, safe='/')}" if query else ""
    return f"postgres://{db['USER']}{password}@{location}/{db['NAME']}{encoded}"


def worker_environment(tmp_path: Path, **overrides: str) -> dict[str, str]:
    """This process's environment with the test settings, the test database and a private
    ``VAR_DIR``; ``overrides`` (e.g. ``CELERY_BROKER_URL``) win."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url_for_processes(),
        "VAR_DIR": str(tmp_path / "var"),
        "PYTHONUNBUFFERED": "1",
        **overrides,
    }


@dataclass
class Process:
    """A subprocess in a session of its own (so signals reach all of it), logging to ``log``."""

    name: str
    popen: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.alive():
            os.killpg(self.popen.pid, sig)
        self.popen.wait(timeout=STOP_SECONDS)

    def stop(self) -> None:
        """SIGTERM (a Celery worker finishes its task and exits), SIGKILL if it does not."""
        if not self.alive():
            return
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()


def process_start(name: str, command: list[str], *, env: dict[str, str], log_dir: Path) -> Process:
    log = log_dir / f"{name}.log"
    with log.open("w") as handle:
        popen = subprocess.Popen(
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Process(name=name, popen=popen, log=log)


def celery_worker_start(name: str, *, queue: str, env: dict[str, str], log_dir: Path) -> Process:
    """A worker (solo pool, no mingle/gossip/heartbeat) consuming ``queue``, named
    ``<name>-<random>@<host>``, returned once its log says it is ready (stopped if it never
    does). On RabbitMQ its own publishes go to ``queue`` (``amqp_worker_env``) unless ``env``
    names its queues."""
    env = {**amqp_worker_env(env.get("CELERY_BROKER_URL", ""), queue), **env}
    process = process_start(
        name,
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config.celery_app",
            "worker",
            "-Q",
            queue,
            "--pool=solo",
            "--without-mingle",
            "--without-gossip",
            "--without-heartbeat",
            "--loglevel=INFO",
            "-n",
            f"{name}-{uuid.uuid4().hex[:6]}@%h",
        ],
        env=env,
        log_dir=log_dir,
    )
    return worker_ready(process)


def worker_ready(process: Process) -> Process:
    """``process`` once its log says the worker is ready; stopped (and the test failed) if it
    exits or never gets there."""
    name = process.name
    try:
        wait_for(
            lambda: "ready." in process.output() or not process.alive(),
            timeout=WORKER_READY_SECONDS,
            what=f"{name} to start; log:\n{process.output()[-3000:]}",
        )
        assert process.alive(), f"{name} exited:\n{process.output()[-3000:]}"
    except BaseException:
        process.stop()
        raise
    return process


@contextlib.contextmanager
def celery_worker_running(
    tmp_path: Path,
    *,
    broker_url: str,
    queue_prefix: str,
    task_patterns: Iterable[str],
    unavailable: Unavailable,
    extra_env: dict[str, str] | None = None,
    name: str = "worker",
) -> Iterator[Process]:
    """A ready worker on Redis or RabbitMQ (``broker_url``) consuming a queue of its own against
    the test database, while this process publishes the tasks matching ``task_patterns`` to that
    queue. Its log is ``tmp_path / f"{name}.log"``. Stopped, and the queue removed, afterwards."""
    broker_require(broker_url, unavailable=unavailable)
    queue = unique_queue(queue_prefix)
    with celery_publishing_to(broker_url, queue=queue, task_patterns=task_patterns):
        worker = celery_worker_start(
            name,
            queue=queue,
            env=worker_environment(tmp_path, CELERY_BROKER_URL=broker_url, **(extra_env or {})),
            log_dir=tmp_path,
        )
        try:
            yield worker
        finally:
            worker.stop()


# --- The Procfile's workers -------------------------------------------------------------------


def procfile_commands(path: Path | None = None) -> dict[str, str]:
    """The Procfile's processes: name → command line."""
    text = (path or Path(settings.BASE_DIR) / "Procfile").read_text()
    commands: dict[str, str] = {}
    for line in text.splitlines():
        name, _, command = line.partition(":")
        if command.strip() and not name.startswith("#"):
            commands[name.strip()] = command.strip()
    return commands


def procfile_worker_names() -> list[str]:
    """The Procfile's Celery worker processes (``celery … worker …``)."""
    return [
        name
        for name, command in procfile_commands().items()
        if command.split()[:1] == ["celery"] and "worker" in command.split()
    ]


@contextlib.contextmanager
def procfile_workers_running(
    tmp_path: Path,
    *,
    broker_url: str,
    unavailable: Unavailable,
    extra_env: dict[str, str] | None = None,
) -> Iterator[dict[str, Process]]:
    """Every Celery worker line of the Procfile, run by a shell as written (its queues, pool and
    concurrency; the environment decides what the line leaves to it) against the test database
    and ``broker_url``, each of the project's queues renamed to one of this test's own
    (``CELERY_DEFAULT_QUEUE``, ``WEBHOOK_QUEUE``); this process publishes by the project's routes
    to those queues meanwhile. A line without ``-Q`` consumes the default queue. Each is named
    ``<name>-<random>@<host>`` and runs without mingle, gossip or heartbeat; logs are
    ``tmp_path / "<name>.log"``. Yields name → process; all stopped afterwards."""
    broker_require(broker_url, unavailable=unavailable)
    project = project_queues()
    queues = {name: unique_queue(f"procfile-{name}") for name in project}
    env = worker_environment(
        tmp_path,
        CELERY_BROKER_URL=broker_url,
        CELERY_DEFAULT_QUEUE=queues[project[0]],
        WEBHOOK_QUEUE=queues.get(getattr(settings, "WEBHOOK_QUEUE", "webhooks"), "webhooks"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **(extra_env or {}),
    )
    started: dict[str, Process] = {}
    with celery_publishing_to(broker_url, queues=queues):
        try:
            for name in procfile_worker_names():
                command = procfile_commands()[name]
                if " -Q " not in f" {command} ":
                    command += f" -Q {queues[project[0]]}"
                command += (
                    " --without-mingle --without-gossip --without-heartbeat"
                    f" -n {name}-{uuid.uuid4().hex[:6]}@%h"
                )
                process = process_start(
                    name, ["bash", "-c", f"exec {command}"], env=env, log_dir=tmp_path
                )
                started[name] = process
                worker_ready(process)
            yield started
        finally:
            for process in started.values():
                process.stop()
