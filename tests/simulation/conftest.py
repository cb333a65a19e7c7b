"""The simulated outside world for the simulator (see ``machine.py``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import responses

from tests.simulation.machine import Environment, environment_open


@pytest.fixture
def simulation_environment(
    db: None, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> Iterator[Environment]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield environment_open(
            seed=int(os.environ.get("SIM_SEED", "0")),
            monkeypatch=monkeypatch,
            settings=settings,
            mock=mock,
        )
