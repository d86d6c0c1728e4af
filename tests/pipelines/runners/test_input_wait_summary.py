"""The run summary prints the Trainer's input-wait advice only when it is actionable."""

from __future__ import annotations

import pytest

from pipelines.outcome.summary import RunSummary, format_summary

ADVICE = "the training step waited for input 40% of the time (more than 10%): the accelerator is starved."


def _warnings(**training) -> list[str]:
    summary = RunSummary(training=dict({"train_steps": 200, "seconds": 1.5, "input_advice": ADVICE}, **training))
    return [line for line in format_summary(summary, 3.0, "/logs/run.log").splitlines() if line.startswith("Warning:")]


@pytest.mark.parametrize(
    "training, shown",
    [
        pytest.param(
            {"input_wait_fraction": 0.4, "mean_step_seconds": 0.0006, "accelerator_hours": 0.0}, False, id="cpu-sub-ms"
        ),
        pytest.param(
            {"input_wait_fraction": 0.4, "mean_step_seconds": 0.02, "accelerator_hours": 0.0}, True, id="cpu-20ms"
        ),
        pytest.param(
            {"input_wait_fraction": 0.4, "mean_step_seconds": 0.0006, "accelerator_hours": 0.01}, True, id="gpu"
        ),
        pytest.param(
            {"input_wait_fraction": 0.4, "mean_step_seconds": 0.0006, "peak_gpu_memory_bytes": 1 << 30},
            True,
            id="gpu-memory",
        ),
        pytest.param(
            {"input_wait_fraction": 0.05, "mean_step_seconds": 0.02, "accelerator_hours": 0.01}, False, id="low-wait"
        ),
    ],
)
def test_input_wait_warning_only_when_actionable(training, shown):
    assert _warnings(**training) == ([f"Warning: {ADVICE}"] if shown else [])
