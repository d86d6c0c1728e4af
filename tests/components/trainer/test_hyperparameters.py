"""Tuned values over the spec's options: what the Trainer's run_fn trains with after a Tuner."""

from __future__ import annotations

import pytest

from components.trainer import run_fn
from components.trainer.hyperparameters import KNOBS, REPORTED_METRICS, knob_values, with_hyperparameters

CUSTOM = {"model": {"type": "dnn", "hidden_units": [64, 32], "dropout": 0.0}, "training": {"learning_rate": 0.001}}


def test_best_values_override_their_sections_and_leave_the_rest():
    best = {"space": [], "values": {"hidden_units": "128,64", "learning_rate": 0.01, "tuner/epochs": 3}}
    custom = with_hyperparameters(CUSTOM, best)
    assert custom["model"] == {"type": "dnn", "hidden_units": [128, 64], "dropout": 0.0}
    assert custom["training"] == {"learning_rate": 0.01}
    assert CUSTOM["model"]["hidden_units"] == [64, 32]  # the input is not changed


def test_no_hyperparameters_keep_the_config():
    assert with_hyperparameters(CUSTOM, None) == CUSTOM


def test_kerastuner_entries_are_not_knobs():
    assert knob_values({"tuner/epochs": 2, "tuner/bracket": 0, "dropout": 0.2}) == {"dropout": 0.2}


def test_reported_metrics_are_those_run_fn_reports():
    assert REPORTED_METRICS == set(run_fn._KERAS_METRICS) | {"accuracy"}


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("dropout", 1.0, "expected below 1"),
        ("learning_rate", 0, "expected above 0"),
        ("batch_size", 0, "expected at least 1"),
        ("embedding_dim", 2.5, "expected a whole number"),
        ("optimizer", "adamw", "expected one of adam"),
        ("hidden_units", [], "expected a list of layer widths"),
    ],
)
def test_a_knob_names_what_it_expected_and_received(name, value, words):
    problem = KNOBS[name].problem(value)
    assert words in problem and repr(value) in problem or str(value) in problem
