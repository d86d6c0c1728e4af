"""`training.warm_start_steps`: a warm-started Trainer trains that many steps; a cold start trains `train_steps`."""

from __future__ import annotations

import pytest
from trainer_fixtures import make_fn_args, read_summary

from components.trainer.run_fn import run_fn
from pipelines.spec.models import TrainingSpec

TRAINING = {"train_steps": 40, "warm_start": True, "warm_start_steps": 10}


def _train(trainer_data, run_dir, base_model=None, model=None) -> dict:
    fn_args = make_fn_args(trainer_data, str(run_dir), TRAINING, materialized=True, model=model)
    fn_args.base_model = base_model
    run_fn(fn_args)
    return {**read_summary(fn_args), "serving": fn_args.serving_model_dir}


def test_warm_start_trains_its_steps_and_a_cold_start_train_steps(trainer_data, tmp_path):
    cold = _train(trainer_data, tmp_path / "first")  # a first run: no blessed model
    assert cold["cold_start"] == "no blessed model yet (a first run)"
    assert cold["train_steps"] == cold["optimizer_steps"] == 40 and "warm_start_steps" not in cold

    warm = _train(trainer_data, tmp_path / "second", base_model=cold["serving"])
    assert warm["warm_started_from"] == cold["serving"]
    assert warm["train_steps"] == warm["optimizer_steps"] == warm["warm_start_steps"] == 10

    # Another architecture cannot start from that model: it is built again and trains train_steps.
    other = _train(
        trainer_data, tmp_path / "third", base_model=cold["serving"], model={"type": "dnn", "hidden_units": [4]}
    )
    assert other["warm_started_from"] is None and "the architecture differs" in other["cold_start"]
    assert other["train_steps"] == other["optimizer_steps"] == 40 and "warm_start_steps" not in other


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        (
            {"warm_start": True, "warm_start_steps": 0},
            "`warm_start_steps` must be at least 1. Received: warm_start_steps=0",
        ),
        (
            {"warm_start_steps": 100},
            "Expected `warm_start: true` with it. Received: warm_start_steps=100, warm_start=false. Add "
            "`warm_start: true`, or remove `warm_start_steps`.",
        ),
        (
            {"warm_start": True, "warm_start_steps": 100, "epochs": 2},
            "Received: warm_start_steps=100, epochs=2. Remove one of them.",
        ),
        ({"warm_start": True, "warm_start_steps": 2_000_000_000}, "`warm_start_steps` is too large"),
    ],
)
def test_bad_warm_start_steps_are_refused_with_the_fix(settings, words):
    with pytest.raises(ValueError) as raised:
        TrainingSpec(**settings)
    assert words in str(raised.value)


def test_warm_start_steps_is_optional():
    assert TrainingSpec(warm_start=True).warm_start_steps is None
