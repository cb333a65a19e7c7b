"""The metrics counted inside processes (prometheus-client), and the middleware that times
requests. What is read at scrape time from the database, the broker and the heartbeats
(backlogs, ages, queue depths) is in ``config/metrics.py``, which also serves ``/metrics``.

Counters live in the process that counts (a gunicorn worker, a Celery worker process), so they
use prometheus-client's multiprocess mode: every process writes its values to files under
``PROMETHEUS_MULTIPROC_DIR`` (``VAR_DIR/prometheus``, set by the settings before this module
is imported) and ``/metrics`` sums the files of every process, live or gone. Counters and
histograms only: they sum across processes without further bookkeeping (a gauge would need
gunicorn's ``child_exit`` to mark dead processes). Processes on other hosts write their own
directory; see README "Metrics and alerts".

Labels are bounded: a route is the URL pattern's name (never the raw path), a status, a
provider name, an outcome. Never a reference, an account number or a key.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client import multiprocess as prometheus_multiprocess

HTTP_REQUESTS = Counter(
    "http_requests_total",
    "HTTP requests answered, by route (URL pattern name), method and status code.",
    ["route", "method", "status"],
)
HTTP_REQUEST_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request, by route (URL pattern name) and method.",
    ["route", "method"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
PAYOUT_DISPATCH_ROUNDS = Counter(
    "payout_dispatch_rounds_total",
    "Dispatch rounds run, by whether they claimed any payout (claimed or empty).",
    ["result"],
)
PAYOUT_DISPATCH_ROUND_PAYOUTS = Counter(
    "payout_dispatch_round_payouts_total",
    "Payouts that dispatch rounds finished with, by outcome (the payout's status, or "
    "deferred, skipped, unanswered).",
    ["outcome"],
)
PAYOUT_PROVIDER_OUTCOMES = Counter(
    "payout_provider_outcomes_total",
    "Answers of payout providers to transfers sent by dispatch, by provider and outcome "
    "(error: the call raised).",
    ["provider", "outcome"],
)

UNMATCHED_ROUTE = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def metrics_registry() -> CollectorRegistry:
    """A registry holding every process's counted metrics: the multiprocess collector when
    ``PROMETHEUS_MULTIPROC_DIR`` is set, else this process's own."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        prometheus_multiprocess.MultiProcessCollector(registry)
        return registry
    from prometheus_client import REGISTRY

    return REGISTRY


def dispatch_round_count(*, claimed: int, outcomes: dict[str, int]) -> None:
    """Counts one dispatch round and how its payouts ended it."""
    PAYOUT_DISPATCH_ROUNDS.labels(result="claimed" if claimed else "empty").inc()
    for outcome, count in outcomes.items():
        PAYOUT_DISPATCH_ROUND_PAYOUTS.labels(outcome=str(outcome)).inc(count)


def provider_outcome_count(provider: str, outcome: str, count: int = 1) -> None:
    """Counts ``count`` answers ``outcome`` of ``provider``."""
    PAYOUT_PROVIDER_OUTCOMES.labels(provider=provider, outcome=str(outcome)).inc(count)


def route_name(request: HttpRequest) -> str:
    """The name of the URL pattern that answered (``namespace:name``), else the pattern itself,
    else ``unmatched``: never the raw path."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED_ROUTE
    if match.url_name:
        return match.view_name
    return match.route or UNMATCHED_ROUTE


class RequestMetricsMiddleware:
    """Counts every answered request and times it, by route, method and status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        route = route_name(request)
        method = request.method if request.method in METHODS else "OTHER"
        HTTP_REQUESTS.labels(route=route, method=method, status=str(response.status_code)).inc()
        HTTP_REQUEST_DURATION.labels(route=route, method=method).observe(elapsed)
        return response
