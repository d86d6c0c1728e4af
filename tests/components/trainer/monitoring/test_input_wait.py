"""The input-wait warning is given only when acting on it would make training faster."""

from __future__ import annotations

import pytest

from components.trainer.monitoring.input_wait import input_wait_is_actionable
from components.trainer.monitoring.performance import input_bound_advice


@pytest.mark.parametrize(
    "fraction, mean_step_seconds, on_accelerator, actionable",
    [
        pytest.param(0.40, 0.0004, False, False, id="cpu-sub-millisecond-steps"),
        pytest.param(0.40, 0.0049, False, False, id="cpu-just-under-5ms"),
        pytest.param(0.40, 0.005, False, True, id="cpu-5ms-steps"),
        pytest.param(0.40, 0.030, False, True, id="cpu-long-steps"),
        pytest.param(0.40, None, False, False, id="cpu-step-time-unknown"),
        pytest.param(0.40, 0.0004, True, True, id="gpu-short-steps"),
        pytest.param(0.10, 0.030, True, False, id="gpu-10-percent-is-fine"),
        pytest.param(0.11, 0.030, False, True, id="cpu-just-over-10-percent"),
        pytest.param(None, 0.030, True, False, id="not-measured"),
    ],
)
def test_input_wait_is_actionable(fraction, mean_step_seconds, on_accelerator, actionable):
    assert input_wait_is_actionable(fraction, mean_step_seconds, on_accelerator) is actionable


def test_advice_is_silent_for_sub_millisecond_cpu_steps_and_given_for_long_ones():
    assert input_bound_advice(0.4, False, False, mean_step_seconds=0.0004, on_accelerator=False) is None
    advice = input_bound_advice(0.4, False, False, mean_step_seconds=0.02, on_accelerator=False)
    assert advice.startswith("the training step waited for input 40% of the time (more than 10%)")
    gpu = input_bound_advice(0.4, False, False, mean_step_seconds=0.0004, on_accelerator=True)
    assert gpu == advice
