"""Per-slice confidence: a `per_slice` gate holds each gated slice to its interval's bound, from a real Evaluator run.

The fixture model (`multiclass_fixtures.py`, classes `no`, `yes`) scores `yes` 0.9 where x = 1 and
0.1 where x = 0. Sliced by `x`:

    slice  rows                       binary_accuracy
    x=0    40 `no`, 10 `yes` (missed)  0.8   (jackknife 95% lower bound about 0.68)
    x=1    40 `yes`                    1.0
    whole  90                          0.8889 (lower bound about 0.80)

With `binary_accuracy: {min: 0.75, per_slice: true}` every point estimate clears the minimum, and
so does the whole split's bound; x=0's lower bound does not, and the model is NOT BLESSED for it.
"""

from __future__ import annotations

import os

import pytest
from multiclass_fixtures import export_model, run_evaluator, write_eval_split

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.verdict import read_verdict

ROWS = [("no", 0)] * 40 + [("yes", 0)] * 10 + [("yes", 1)] * 40
MINIMUM = 0.75


REQUEST = EvaluationRequest(
    label_key="species",
    task="classification",
    metrics=("binary_accuracy",),
    thresholds={"binary_accuracy": {"min": MINIMUM, "per_slice": True, "min_examples": 30}},
    slices=(("x",),),
    confidence=0.95,
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[str, str, str]:
    root = str(tmp_path_factory.mktemp("slice_confidence"))
    model_uri, examples = os.path.join(root, "model"), os.path.join(root, "examples")
    export_model(model_uri, classes=["no", "yes"])
    write_eval_split(examples, ROWS)
    return root, model_uri, examples


def _evaluate(inputs, name: str) -> dict:
    root, model_uri, examples = inputs
    result = run_evaluator(os.path.join(root, name), REQUEST, model_uri, examples)
    return {**result, "verdict": read_verdict(result["blessing"])}


@pytest.fixture(scope="module")
def run(inputs) -> dict:
    return _evaluate(inputs, "run")


def test_a_rerun_of_one_model_on_one_split_gets_the_same_intervals(run, inputs):
    """TFMA deals the jackknife's buckets with an unseeded generator; `compat.tfma.jackknife_seed` fixes
    the seed, so a gate on a bound cannot flip between reruns of one model."""
    rerun = _evaluate(inputs, "rerun")

    assert rerun["verdict"]["confidence"] == run["verdict"]["confidence"]
    assert _rows(rerun)["x=0"]["intervals"] == _rows(run)["x=0"]["intervals"]


def _rows(run) -> dict[str, dict]:
    return {row["slice"]: row for row in run["verdict"]["slices"]}


def test_each_slice_has_its_interval_around_its_value(run):
    rows = _rows(run)

    assert sorted(rows) == ["x=0", "x=1"]
    for name, value in (("x=0", 0.8), ("x=1", 1.0)):
        point, low, high = rows[name]["intervals"]["binary_accuracy"]
        assert point == pytest.approx(value) == rows[name]["metrics"]["binary_accuracy"]
        assert low <= point <= high
    low, high = rows["x=0"]["intervals"]["binary_accuracy"][1:]
    assert 0.55 < low < MINIMUM < 0.8 < high  # a noisy slice of 50 rows: a wide interval


def test_a_gated_slice_whose_bound_fails_is_not_blessed_and_named(run):
    value, low, high = _rows(run)["x=0"]["intervals"]["binary_accuracy"]
    overall = run["verdict"]["confidence"]["intervals"]["binary_accuracy"]

    assert run["blessed"] == 0
    assert os.path.exists(os.path.join(run["blessing"], "NOT_BLESSED"))
    assert overall[0] == pytest.approx(80 / 90) and overall[1] > MINIMUM  # the whole split clears its bound
    assert run["verdict"]["reasons"] == [
        f"binary_accuracy on x=0 = {value:.4f} clears the minimum {MINIMUM:.4f}, but its lower 95% confidence "
        f"bound {low:.4f} does not (interval [{low:.4f}, {high:.4f}]; evaluation.confidence)"
    ]
