"""Payout failures that are not answers to a request: the worker and the sweepers handle them."""

from __future__ import annotations


class DispatchDeferredError(Exception):
    """The provider was not reached; the payout stays ``processing`` for a later attempt."""
