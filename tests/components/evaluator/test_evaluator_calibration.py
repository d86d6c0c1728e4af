"""The report's calibration plot of a binary classifier, from a real Evaluator run, and its calibration error.

The fixture model (`multiclass_fixtures.py`) exported with the classes `no`, `yes` scores `yes`
0.9 where x = 1 and 0.1 where x = 0, so its calibration is known exactly: 10 rows at 0.9, all
`yes`; 50 rows at 0.1, of which 10 are `yes` (0.2): ECE = (10 * 0.1 + 50 * 0.1) / 60 = 0.1.
A second run adds 3 rows the model scores NaN (x = 99): AUC and the plot used to stop the Evaluator
there (TFMA's histogram calls `int(nan)`); now it completes, the plot leaves those rows out, and
the NaN scores void the blessing although binary_accuracy (50/63) clears its minimum.
"""

from __future__ import annotations

import os

import pytest
from multiclass_fixtures import export_model, run_evaluator, write_eval_split

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.verdict import read_verdict
from pipelines.report.calibration import calibration_curves, expected_calibration_error
from pipelines.report.eval_plots import ResidualBucket

ROWS = [("no", 0)] * 40 + [("yes", 1)] * 10 + [("yes", 0)] * 10


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    root = str(tmp_path_factory.mktemp("calibration"))
    model_uri, examples = os.path.join(root, "model"), os.path.join(root, "examples")
    nan_scores = os.path.join(root, "nan_scores")
    export_model(model_uri, classes=["no", "yes"])
    write_eval_split(examples, ROWS)
    write_eval_split(nan_scores, ROWS + [("yes", 99)] * 3)
    request = EvaluationRequest(
        label_key="species",
        task="classification",
        metrics=("binary_accuracy", "auc"),
        thresholds={"binary_accuracy": {"min": 0.5}},
    )
    return {
        "plain": run_evaluator(os.path.join(root, "run"), request, model_uri, examples),
        "nan": run_evaluator(os.path.join(root, "nan_run"), request, model_uri, nan_scores),
    }


@pytest.fixture(scope="module")
def evaluation(runs) -> str:
    return runs["plain"]["evaluation"]


def test_a_binary_label_gets_the_calibration_of_its_positive_class_with_its_ece(evaluation):
    (curve,) = calibration_curves(evaluation, ["no", "yes"])

    assert curve.name == ""
    assert [(b.count, round(b.mean_prediction, 4), round(b.mean_label, 4)) for b in curve.buckets] == [
        (50, 0.1, 0.2),
        (10, 0.9, 1.0),
    ]
    assert curve.ece == pytest.approx(0.1, abs=1e-5)


def test_nan_scores_are_left_out_of_the_plot_and_void_the_blessing(runs):
    run = runs["nan"]
    verdict = read_verdict(run["blessing"])
    (curve,) = calibration_curves(run["evaluation"], ["no", "yes"])
    (plain,) = calibration_curves(runs["plain"]["evaluation"], ["no", "yes"])

    assert curve.left_out == 3
    assert curve.buckets == plain.buckets
    assert run["blessed"] == 0
    assert verdict["reasons"] == [
        "the model's scores are NaN on 3 of 63 eval rows: a blessed model must score every row. Expected finite "
        "scores. Fix or drop the NaN cells the model reads (or retrain if its loss was NaN) and rerun"
    ]
    assert runs["plain"]["blessed"] == 1


def test_ece_is_the_row_weighted_gap_and_none_without_rows():
    buckets = [ResidualBucket(0.0, 0.1, 30, 0.0, 0.05), ResidualBucket(0.9, 1.0, 10, 0.8, 0.95)]

    assert expected_calibration_error(buckets) == pytest.approx((30 * 0.05 + 10 * 0.15) / 40)
    assert expected_calibration_error([]) is None
