from __future__ import annotations

from datetime import timedelta

from payouts.checks import dispatch_timeouts_check


def test_visibility_timeout_above_claim_timeout_passes(settings) -> None:
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 300}
    settings.PAYOUT_DISPATCH_CLAIM_TIMEOUT = timedelta(seconds=180)
    assert dispatch_timeouts_check() == []


def test_visibility_timeout_not_above_claim_timeout_warns(settings) -> None:
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 180}
    settings.PAYOUT_DISPATCH_CLAIM_TIMEOUT = timedelta(seconds=180)
    [warning] = dispatch_timeouts_check()
    assert warning.id == "payouts.W001"
    assert "CELERY_VISIBILITY_TIMEOUT (180 s)" in warning.msg


def test_brokers_without_visibility_timeout_are_not_checked(settings) -> None:
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": "var/broker/out"}
    assert dispatch_timeouts_check() == []
