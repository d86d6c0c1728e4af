"""Input-bound training is measured and reported with a fix."""

from __future__ import annotations

import logging

import pytest
from trainer_fixtures import make_fn_args, read_summary

from components.trainer.monitoring.performance import input_bound_advice
from components.trainer.run_fn import run_fn


def test_no_advice_at_or_below_ten_percent():
    assert input_bound_advice(0.10, materialized=False, cached=False) is None


@pytest.mark.parametrize(
    ("materialized", "cached", "present", "absent"),
    [
        (False, False, ["cache_budget_mb", "transform.materialize: true", "batch_size"], []),
        (True, False, ["cache_budget_mb", "batch_size"], ["materialize"]),
        (True, True, ["batch_size", "CPU cores"], ["cache_budget_mb", "materialize"]),
    ],
)
def test_advice_offers_only_the_fixes_that_apply(materialized, cached, present, absent):
    advice = input_bound_advice(0.42, materialized, cached)
    assert advice.startswith("the training step waited for input 42% of the time (more than 10%)")
    assert all(fix in advice for fix in present) and not any(fix in advice for fix in absent)


def test_an_input_bound_run_logs_the_warning_with_its_measured_wait(trainer_data, tmp_path, caplog):
    # Raw examples, nothing cached: the Transform graph runs on every batch.
    training = {"train_steps": 20, "eval_steps": 1, "batch_size": 256, "steps_per_execution": 5, "cache_budget_mb": 0}
    fn_args = make_fn_args(
        trainer_data, str(tmp_path), training, materialized=False, model={"type": "dnn", "hidden_units": [8]}
    )
    with caplog.at_level(logging.WARNING, logger="absl"):
        run_fn(fn_args)
    report = read_summary(fn_args)
    fraction = report["input_wait_fraction"]
    assert fraction > 0.10
    # Logged only when actionable: on a CPU, when steps take long enough for the wait to matter
    # (components.trainer.monitoring.input_wait; both sides are tested in test_input_wait.py).
    advice = input_bound_advice(
        fraction, materialized=False, cached=False, mean_step_seconds=report["mean_step_seconds"], on_accelerator=False
    )
    warnings = [r.getMessage() for r in caplog.records if "waited for input" in r.getMessage()]
    assert warnings == ([f"Trainer: {advice}"] if advice else [])
    # The run summary shows the same advice (pipelines.outcome.summary prints it).
    assert report.get("input_advice") == advice
