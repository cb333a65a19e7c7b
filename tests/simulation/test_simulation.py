"""Runs the simulator with a bounded budget (``make test``) or a long one (``make simulate``).

``SIM_EXAMPLES`` sequences of up to ``SIM_STEPS`` steps each. Under ``make test`` the run is
deterministic (derandomized); ``make simulate SEED=…`` seeds Hypothesis instead, and a failure
prints the shortened sequence of steps and the seed to run it again.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.simulation.machine import Environment, MoneyCoreMachine

EXAMPLES = int(os.environ.get("SIM_EXAMPLES", "40"))
STEPS = int(os.environ.get("SIM_STEPS", "50"))
SEEDED = "SIM_SEED" in os.environ


def test_the_money_core_keeps_its_invariants(simulation_environment: Environment) -> None:
    try:
        run_state_machine_as_test(
            MoneyCoreMachine,
            settings=settings(
                max_examples=EXAMPLES,
                stateful_step_count=STEPS,
                derandomize=not SEEDED,
                deadline=None,
                database=None,
                phases=[Phase.explicit, Phase.generate, Phase.shrink],
                suppress_health_check=list(HealthCheck),
                print_blob=True,
            ),
        )
    except BaseException:
        print("\nLast history:\n" + "\n".join(simulation_environment.history[-80:]))
        raise
    finally:
        print("\nWhat the sequences explored:\n" + simulation_environment.summary())
