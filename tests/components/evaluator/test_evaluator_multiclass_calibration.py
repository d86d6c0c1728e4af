"""The report's calibration of a multi-class label, one class against the rest, from real Evaluator runs.

The fixture model (`multiclass_fixtures.py`) scores the class whose index is `x` 0.8667 and the two
others 0.0667 each, so each class's calibration is known exactly:

    class      scored 0.8667            scored 0.0667           ECE
    Adelie     50 rows, 40 Adelie (0.8)  30 rows, none (0.0)     (50 * 0.0667 + 30 * 0.0667) / 80 = 0.0667
    Chinstrap  10 rows, all (1.0)        70 rows, 10 (0.1429)    (10 * 0.1333 + 70 * 0.0762) / 80 = 0.0833
    Gentoo     20 rows, all (1.0)        60 rows, none (0.0)     (20 * 0.1333 + 60 * 0.0667) / 80 = 0.0833

The label's ECE weights the classes by their rows (40, 20, 20): (40 * 0.0667 + 40 * 0.0833) / 80 = 0.075.
A second run adds 4 rows whose scores are NaN (x = 99): the Evaluator completes, the NaN loss voids
the blessing, and the calibration curves leave those rows out.
"""

from __future__ import annotations

import os

import pytest
from multiclass_fixtures import CLASSES, ROWS, export_model, run_evaluator, write_eval_split

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.verdict import read_verdict
from pipelines.report.calibration import calibration_curves, class_weighted_ece

HIGH, LOW = 0.8 + 0.2 / 3, 0.2 / 3


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    root = str(tmp_path_factory.mktemp("multiclass_calibration"))
    model_uri = os.path.join(root, "model")
    export_model(model_uri)
    examples, nan_scores = os.path.join(root, "examples"), os.path.join(root, "nan_scores")
    write_eval_split(examples)
    write_eval_split(nan_scores, ROWS + [("Gentoo", 99)] * 4)
    request = EvaluationRequest(
        label_key="species",
        task="classification",
        metrics=("accuracy", "sparse_categorical_crossentropy", "macro_auc"),
        thresholds={"accuracy": {"min": 0.5}},
    )
    return {
        "plain": run_evaluator(os.path.join(root, "plain"), request, model_uri, examples),
        "nan": run_evaluator(os.path.join(root, "nan"), request, model_uri, nan_scores),
    }


def _shape(curve) -> list[tuple]:
    return [(b.count, round(b.mean_prediction, 4), round(b.mean_label, 4)) for b in curve.buckets]


def test_each_class_gets_its_calibration_against_the_rest_with_its_ece(runs):
    curves = calibration_curves(runs["plain"]["evaluation"], CLASSES)

    assert [c.name for c in curves] == CLASSES
    adelie, chinstrap, gentoo = curves
    assert _shape(adelie) == [(30, round(LOW, 4), 0.0), (50, round(HIGH, 4), 0.8)]
    assert _shape(chinstrap) == [(70, round(LOW, 4), round(10 / 70, 4)), (10, round(HIGH, 4), 1.0)]
    assert _shape(gentoo) == [(60, round(LOW, 4), 0.0), (20, round(HIGH, 4), 1.0)]
    assert adelie.ece == pytest.approx(LOW, abs=1e-5)
    assert chinstrap.ece == pytest.approx(1 / 12, abs=1e-5)
    assert gentoo.ece == pytest.approx(1 / 12, abs=1e-5)
    assert [c.left_out for c in curves] == [0, 0, 0]


def test_the_label_ece_weights_each_class_by_its_rows(runs):
    curves = calibration_curves(runs["plain"]["evaluation"], CLASSES)

    assert [round(c.positives) for c in curves] == [40, 20, 20]
    assert class_weighted_ece(curves) == pytest.approx(0.075, abs=1e-5)
    assert class_weighted_ece(curves[:1]) is None


def test_nan_scores_are_evaluated_not_blessed_and_left_out_of_the_curves(runs):
    run = runs["nan"]
    verdict = read_verdict(run["blessing"])
    curves = calibration_curves(run["evaluation"], CLASSES)

    assert run["blessed"] == 0
    assert verdict["reasons"][0].startswith("sparse_categorical_crossentropy is nan on the eval split")
    assert verdict["reasons"][1].startswith("the model's scores are NaN on 4 of 84 eval rows")
    assert [c.name for c in curves] == CLASSES
    assert [c.left_out for c in curves] == [4, 4, 4]
    # The finite rows' curves are those of the run without NaN rows.
    assert [_shape(c) for c in curves] == [_shape(c) for c in calibration_curves(runs["plain"]["evaluation"], CLASSES)]
