"""Tripwires for every place the service relies on a library's internals (docs/architecture.md,
"Where the ORM is bypassed, and why"): each was checked against one version of the library.
When an upgrade changes that version, its test here fails and names the code to re-check; once
re-checked (the code's own tests pass, the internal still does what the code says), update the
pin. Behaviour tripwires check the internal itself where that is cheap."""

from __future__ import annotations

import importlib.metadata

import pytest
from django.db import connection, transaction

# What each reliance was checked against. One pin per distribution; the tests name the code.
CHECKED_AGAINST = {
    "Django": "5.2.19",
    "psycopg": "3.3.9",
    "psycopg-binary": "3.3.9",
    "redis": "6.4.0",
    "urllib3": "2.8.0",
    "requests": "2.34.2",
    "drf-spectacular": "0.30.0",
    "uvicorn-worker": "0.4.0",
    "uvicorn": "0.54.0",
    "a2wsgi": "1.10.10",
    "hypothesis": "6.170.15",
    "djangorestframework": "3.18.3",
}


def _pin_check(distribution: str, relies: str) -> None:
    pinned = CHECKED_AGAINST[distribution]
    installed = importlib.metadata.version(distribution)
    assert installed == pinned, (
        f"{distribution} is {installed}, but {relies} was checked against {pinned}: re-check it "
        f"against {installed}, then update CHECKED_AGAINST[{distribution!r}] in this file"
    )


@pytest.mark.parametrize(
    ("distribution", "relies"),
    [
        (
            "psycopg",
            "core/postgres.py (psycopg's compiled timestamptz loader, registered per connection "
            "behind a Loader subclass whose load is the compiled method)",
        ),
        ("psycopg-binary", "core/postgres.py (the compiled loader it provides)"),
        (
            "Django",
            "core/postgres.py (Django's create_cursor compares the connection's loader "
            "`timezone` attribute), wallets/services.py _in_atomic_block (the test case's "
            "atomic blocks marked `_from_testcase`), core/cache.py (RedisCacheClient's "
            "_get_connection_pool_index/_get_connection_pool/_client, RedisCache's "
            "_class/_cache), core/db.py ModelRow (get_col and the backend's and fields' "
            "converters, Model.from_db; row_insert: Model._prepare_related_fields_for_save, "
            "Field.pre_save/get_db_prep_save and the INSERT's column order) and "
            "merchants/admin.py (a service-created row marked saved through `_state`)",
        ),
        (
            "djangorestframework",
            "core/api/fields.py InputSerializer (Serializer.get_fields replaced: the declared "
            "fields copied with copy.copy instead of Field.__deepcopy__, the `_validators`, "
            "`error_messages` and `style` containers copied per serializer)",
        ),
        (
            "redis",
            "core/cache.py (one redis.Redis client per pool, pipelines, SET NX PX and PTTL)",
        ),
        (
            "urllib3",
            "webhooks/posting.py (HTTPConnection._new_conn overridden and the pools' "
            "ConnectionCls swapped, so the delivery deadline can shut the socket down)",
        ),
        (
            "requests",
            "webhooks/posting.py (HTTPAdapter.init_poolmanager's poolmanager."
            "pool_classes_by_scheme and build_connection_pool_key_attributes, for the pinned "
            "address and the deadline's connections)",
        ),
        (
            "drf-spectacular",
            "core/api/schema.py (AutoSchema._get_examples and _is_list_view overridden so "
            "examples are whole answers)",
        ),
        (
            "uvicorn-worker",
            "config/web.py (UvicornWorker's _install_sigquit_handler and _serve replaced, "
            "CONFIG_KWARGS, init_signals and load_wsgi extended)",
        ),
        (
            "uvicorn",
            "config/web.py (Server(config).serve(sockets=…), server.started, server.should_exit, "
            "config.limit_concurrency)",
        ),
        ("a2wsgi", "config/web.py (WSGIMiddleware(app, workers=N) as the thread pool)"),
        (
            "hypothesis",
            "tests/conftest.py (the fast lane lowers a test's own max_examples through "
            "`_hypothesis_internal_use_settings`)",
        ),
    ],
)
def test_each_library_internal_is_the_version_it_was_checked_against(
    distribution: str, relies: str
) -> None:
    _pin_check(distribution, relies)


@pytest.mark.django_db
def test_the_test_cases_atomic_blocks_are_marked_from_testcase() -> None:
    """wallets/services.py ``_in_atomic_block`` ignores the blocks Django's test case opens by
    their ``_from_testcase`` mark; were the mark gone, every service that needs the caller's
    transaction would pass unchecked under tests."""
    assert connection.atomic_blocks, "pytest-django's test case opened no atomic block"
    assert all(getattr(block, "_from_testcase", False) for block in connection.atomic_blocks), (
        "Django no longer marks the test case's atomic blocks `_from_testcase`: "
        "wallets/services.py _in_atomic_block relies on it"
    )
    with transaction.atomic():
        assert not getattr(connection.atomic_blocks[-1], "_from_testcase", False)


def test_the_redis_cache_internals_core_cache_overrides_exist() -> None:
    from django.core.cache.backends.redis import RedisCacheClient

    from core.cache import PooledRedisCache, PooledRedisCacheClient

    for name in ("_get_connection_pool_index", "_get_connection_pool", "get_client"):
        assert callable(getattr(RedisCacheClient, name, None)), (
            f"RedisCacheClient.{name} is gone: core/cache.py PooledRedisCacheClient relies on it"
        )
    backend = PooledRedisCache("redis://127.0.0.1:6379/0", {})
    assert isinstance(backend._cache, PooledRedisCacheClient), (
        "RedisCache no longer builds its client from `_class` into `_cache`: core/cache.py "
        "PooledRedisCache relies on both"
    )
    assert backend._cache.get_client(write=True) is backend._cache.get_client(write=True)


def test_the_urllib3_internals_webhooks_posting_overrides_exist() -> None:
    from urllib3 import connection as urllib3_connection
    from urllib3 import connectionpool

    for cls in (urllib3_connection.HTTPConnection, urllib3_connection.HTTPSConnection):
        assert callable(getattr(cls, "_new_conn", None)), (
            f"{cls.__name__}._new_conn is gone: webhooks/posting.py hands the socket it "
            "returns to the delivery deadline"
        )
    for pool in (connectionpool.HTTPConnectionPool, connectionpool.HTTPSConnectionPool):
        assert hasattr(pool, "ConnectionCls"), (
            f"{pool.__name__}.ConnectionCls is gone: webhooks/posting.py swaps it"
        )


def test_the_uvicorn_worker_internals_config_web_replaces_exist() -> None:
    from uvicorn.server import Server
    from uvicorn_worker import UvicornWorker

    for name in ("_install_sigquit_handler", "_serve", "init_signals", "load_wsgi"):
        assert callable(getattr(UvicornWorker, name, None)), (
            f"UvicornWorker.{name} is gone: config/web.py WebWorker overrides it"
        )
    assert isinstance(getattr(UvicornWorker, "CONFIG_KWARGS", None), dict), (
        "UvicornWorker.CONFIG_KWARGS is gone: config/web.py WebWorker sets it"
    )
    for name in ("serve", "should_exit", "started"):
        assert hasattr(Server, name) or name in Server.__init__.__code__.co_names, (
            f"uvicorn's Server.{name} is gone: config/web.py WebWorker._serve relies on it"
        )
