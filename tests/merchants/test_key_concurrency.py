"""Concurrent rolls of one secret key on real PostgreSQL, with real threads (each its own
connection): exactly one new key, never two secret keys without an expiry; and the database
itself refuses a second current secret key."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction

from core.exceptions import ConflictError
from merchants.keys import secret_key_generate, secret_key_hash, secret_key_prefix
from merchants.models import KeyKind, Mode, SecretKey
from merchants.services import merchant_create, secret_key_roll

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def run_together(workers: list[Callable[[], Any]]) -> list[Any]:
    barrier = threading.Barrier(len(workers))
    results: list[Any] = [None] * len(workers)

    def run(index: int, work: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[index] = work()
        except Exception as error:  # noqa: BLE001 - the test inspects it
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, w)) for i, w in enumerate(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def _current_secret_keys(merchant_id: int) -> int:
    return SecretKey.objects.filter(
        merchant_id=merchant_id,
        mode=Mode.TEST,
        kind=KeyKind.SECRET,
        revoked_at__isnull=True,
        expires_at__isnull=True,
    ).count()


def test_concurrent_rolls_of_one_key_make_exactly_one_new_key() -> None:
    created = merchant_create(name="Roll Race", email="race@example.com")
    calling_key = created.test_key.secret_key

    def roll() -> Any:
        key = SecretKey.objects.get(pk=calling_key.pk)  # each thread's own read, as a request
        return secret_key_roll(calling_key=key, expires_in_hours=1)

    results = run_together([roll] * 6)

    rolled = [result for result in results if not isinstance(result, Exception)]
    refused = [result for result in results if isinstance(result, Exception)]
    assert len(rolled) == 1, results
    assert all(isinstance(error, ConflictError) for error in refused), refused
    assert SecretKey.objects.filter(merchant=created.merchant, mode=Mode.TEST).count() == 2
    assert _current_secret_keys(created.merchant.pk) == 1
    assert SecretKey.objects.get(pk=calling_key.pk).expires_at is not None


def test_concurrent_rolls_of_the_test_and_live_keys_each_roll() -> None:
    created = merchant_create(name="Two Modes", email="modes@example.com")
    keys = [created.test_key.secret_key, created.live_key.secret_key]
    results = run_together(
        [lambda key=key: secret_key_roll(calling_key=key, expires_in_hours=0) for key in keys]
    )
    assert not [result for result in results if isinstance(result, Exception)], results
    assert SecretKey.objects.filter(merchant=created.merchant).count() == 4


def test_the_database_refuses_a_second_current_secret_key_of_a_mode() -> None:
    created = merchant_create(name="Constraint", email="constraint@example.com")
    plaintext = secret_key_generate(mode=Mode.TEST)
    with pytest.raises(IntegrityError), transaction.atomic():
        SecretKey.objects.create(
            merchant=created.merchant,
            mode=Mode.TEST,
            key_hash=secret_key_hash(plaintext),
            prefix=secret_key_prefix(plaintext),
        )
    assert _current_secret_keys(created.merchant.pk) == 1
