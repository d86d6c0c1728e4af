"""The built-in `tuner_fn` on a small real dataset: KerasTuner's oracles drive trials of the spec's model."""

from __future__ import annotations

import pytest
import tensorflow as tf
from trainer_fixtures import make_fn_args

from components.trainer.hyperparameters import knob_values, with_hyperparameters
from components.tuner.tuner_fn import objective, tuner_fn

SPACE = {
    "hidden_units": {"choices": [[8], [24, 12]]},
    "learning_rate": {"min": 0.001, "max": 0.05, "sampling": "log"},
    "batch_size": {"min": 16, "max": 32, "step": 16},
}


def _fn_args(
    data, root, algorithm: str, max_trials: int, objective_name: str = "binary_accuracy", parallel_trials: int = 1
):
    fn_args = make_fn_args(data, str(root), {"train_steps": 6, "eval_steps": 2, "steps_per_execution": 3})
    tuning = {
        "search_space": SPACE,
        "algorithm": algorithm,
        "max_trials": max_trials,
        "objective": objective_name,
        "train_steps": None,
        "max_epochs": 3,
        "seed": 0,
        "parallel_trials": parallel_trials,
    }
    fn_args.custom_config = {**fn_args.custom_config, "tuning": tuning}
    return fn_args


def _search(fn_args):
    result = tuner_fn(fn_args)
    result.tuner.search(**result.fit_kwargs)
    return result.tuner


def test_random_search_runs_max_trials_of_the_spec_model_within_the_space(tuner_data, tmp_path):
    tuner = _search(_fn_args(tuner_data, tmp_path, "random", 3))
    trials = [t for t in tuner.oracle.trials.values() if t.status == "COMPLETED"]
    assert len(trials) == 3
    for trial in trials:
        values = knob_values(trial.hyperparameters.values)
        assert values["hidden_units"] in ([8], [24, 12])
        assert 0.001 <= values["learning_rate"] <= 0.05
        assert values["batch_size"] in (16, 32)
        assert 0.0 <= trial.score <= 1.0  # val_binary_accuracy
    best = tuner.get_best_hyperparameters()[0]
    assert best.values == max(trials, key=lambda t: t.score).hyperparameters.values
    # The best values override the spec's, as the Trainer's run_fn applies them.
    custom = with_hyperparameters(tuner.hypermodel._custom, best.get_config())
    assert custom["model"]["hidden_units"] == knob_values(best.values)["hidden_units"]
    assert custom["model"]["embedding_dim"] == 4  # knobs not searched keep the spec's value
    assert custom["training"]["batch_size"] == best.values["batch_size"]


def test_a_trial_builds_the_layers_it_was_given(tuner_data, tmp_path):
    tuner = tuner_fn(_fn_args(tuner_data, tmp_path, "random", 1)).tuner
    hp = tuner.oracle.get_space()
    hp.values["hidden_units"] = "24,12"
    model = tuner.hypermodel.build(hp)
    widths = [
        layer.units
        for layer in model.layers
        if isinstance(layer, tf.keras.layers.Dense) and layer.activation.__name__ == "relu"
    ]
    assert widths == [24, 12]


def test_hyperband_trains_rounds_and_stops_at_max_trials(tuner_data, tmp_path):
    tuner = _search(_fn_args(tuner_data, tmp_path, "hyperband", 3, objective_name="loss"))
    trials = list(tuner.oracle.trials.values())
    assert 1 <= len(trials) <= 3
    assert all("tuner/epochs" in t.hyperparameters.values for t in trials)
    assert "tuner/epochs" not in knob_values(tuner.get_best_hyperparameters()[0].values)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("loss", ("val_loss", "min")),
        ("auc", ("val_auc", "max")),
        ("mean_absolute_error", ("val_mean_absolute_error", "min")),
    ],
)
def test_objective_direction_follows_the_metric(name, expected):
    found = objective(name)
    assert (found.name, found.direction) == expected


def test_parallel_trials_run_in_worker_processes_of_kerastuners_distributed_mode(tuner_data, tmp_path):
    fn_args = _fn_args(tuner_data, tmp_path, "random", 2, parallel_trials=2)
    tuner = _search(fn_args)
    trials = [t for t in tuner.oracle.trials.values() if t.status == "COMPLETED"]
    assert len(trials) == 2  # reloaded from the chief oracle's saved state
    assert tuner.get_best_hyperparameters()[0].values == max(trials, key=lambda t: t.score).hyperparameters.values
    logs = tmp_path / "trial_processes"
    ran = {log.stem: log.read_text(encoding="utf-8") for log in logs.glob("tuner*.log")}
    assert sorted(ran) == ["tuner0", "tuner1"]
    assert all("Tuner trial" in text for text in ran.values()), ran  # each worker ran a trial
