"""The real Evaluator (TFX executor + TFMA on in-process Beam) on a tiny 3-class model.

Four runs shared by the module: thresholds (a per-class one passes, a
per-class one and an aggregated one fail), no thresholds (the majority-class
baseline), an eval split whose labels hold one class (nothing can beat that
baseline), and rows with NaN scores (a passing threshold, a NaN loss, the NaN scores counted).
"""

from __future__ import annotations

import os

import pytest
from multiclass_fixtures import ROWS, export_model, run_evaluator, write_eval_split

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.verdict import read_verdict
from pipelines.outcome.summary import RunSummary, _evaluation, format_summary

METRICS = ("accuracy", "precision", "recall", "macro_auc", "weighted_auc", "top_k_accuracy", "confusion_matrix")


def _request(thresholds: dict) -> EvaluationRequest:
    return EvaluationRequest(
        label_key="species", task="classification", metrics=METRICS, thresholds=thresholds, top_k=2
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    root = str(tmp_path_factory.mktemp("evaluator"))
    model_uri = os.path.join(root, "model")
    export_model(model_uri)
    examples, one_class = os.path.join(root, "examples"), os.path.join(root, "one_class")
    write_eval_split(examples)
    write_eval_split(one_class, [row for row in ROWS if row[0] == "Adelie"])
    nan_scores = os.path.join(root, "nan_scores")
    write_eval_split(nan_scores, ROWS + [("Gentoo", 99)] * 4)
    gates = {
        "precision": {"min": 0.9, "classes": ["Gentoo"]},
        "recall": {"min": 0.9, "classes": ["Chinstrap"]},
        "macro_auc": {"min": 0.95},
    }
    return {
        "gated": run_evaluator(os.path.join(root, "gated"), _request(gates), model_uri, examples),
        "baseline": run_evaluator(os.path.join(root, "baseline"), _request({}), model_uri, examples),
        "one_class": run_evaluator(os.path.join(root, "one_class_run"), _request({}), model_uri, one_class),
        "nan": run_evaluator(
            os.path.join(root, "nan_run"),
            EvaluationRequest(
                label_key="species",
                task="classification",
                metrics=("accuracy", "sparse_categorical_crossentropy"),
                thresholds={"accuracy": {"min": 0.5}},
            ),
            model_uri,
            nan_scores,
        ),
    }


def _summarize(run: dict) -> RunSummary:
    summary = RunSummary(blessed=bool(run["blessed"]))
    _evaluation(run["evaluation"], summary, read_verdict(run["blessing"]))
    return summary


def test_failed_per_class_and_aggregated_thresholds_are_not_blessed_and_named(runs):
    verdict = read_verdict(runs["gated"]["blessing"])

    assert runs["gated"]["blessed"] == 0
    assert os.path.exists(os.path.join(runs["gated"]["blessing"], "NOT_BLESSED"))
    # recall@Chinstrap is 10/20 and macro_auc (0.875, 0.75, 1.0) 0.875; precision@Gentoo (1.0) passes.
    assert sorted(verdict["reasons"]) == [
        "macro_auc = 0.8750 is below the minimum 0.9500",
        "recall@Chinstrap = 0.5000 is below the minimum 0.9000",
    ]


def test_no_thresholds_is_held_to_the_majority_class_baseline(runs):
    verdict = read_verdict(runs["baseline"]["blessing"])

    assert runs["baseline"]["blessed"] == 1
    # 70 of 80 rows right; the majority class (Adelie) is 40 of 80.
    assert verdict["reasons"] == [
        "no thresholds declared: accuracy 0.8750 beat the majority-class baseline 0.5000 on the eval split"
    ]


def test_single_class_eval_split_is_not_blessed(runs):
    verdict = read_verdict(runs["one_class"]["blessing"])

    assert runs["one_class"]["blessed"] == 0
    assert verdict["reasons"] == [
        "no thresholds declared: accuracy 1.0000 did not beat the majority-class baseline 1.0000 on the eval "
        "split: its labels hold one class only, so no model can beat this baseline"
    ]


def test_nan_metric_voids_the_blessing_tfma_gave(runs):
    verdict = read_verdict(runs["nan"]["blessing"])

    # accuracy (70/84) passes its threshold, but the loss over NaN scores is NaN.
    assert runs["nan"]["blessed"] == 0
    assert not os.path.exists(os.path.join(runs["nan"]["blessing"], "BLESSED"))
    assert len(verdict["reasons"]) == 2
    assert verdict["reasons"][0].startswith("sparse_categorical_crossentropy is nan on the eval split")
    assert verdict["reasons"][1].startswith("the model's scores are NaN on 4 of 84 eval rows")


def test_summary_prints_the_verdict_reason_and_per_class_metrics(runs):
    summary = _summarize(runs["gated"])
    line = format_summary(summary, 1.0, "/logs/run.log").splitlines()[0]

    assert line.startswith("Model: NOT BLESSED (")
    assert "recall@Chinstrap = 0.5000 is below the minimum 0.9000" in line
    assert "macro_auc = 0.8750 is below the minimum 0.9500" in line
    assert summary.metrics["precision@Adelie"] == 0.8
    assert summary.metrics["recall@Chinstrap"] == 0.5
    assert summary.metrics["accuracy"] == 0.875
    assert summary.metrics["top_k_accuracy"] == 1.0
    assert summary.metrics["macro_auc"] == 0.875


def test_summary_prints_the_confusion_matrix_by_class_name(runs):
    summary = _summarize(runs["gated"])

    # Half the Chinstrap rows have x=0, so they are predicted Adelie.
    assert summary.confusion_matrix == [[40, 0, 0], [10, 10, 0], [0, 0, 20]]
    assert (
        "Confusion matrix (actual -> predicted Adelie Chinstrap Gentoo): Adelie -> 40 0 0; Chinstrap -> 10 10 0; "
        "Gentoo -> 0 0 20"
    ) in format_summary(summary, 1.0, "/logs/run.log").splitlines()


def test_summary_of_a_baseline_verdict_names_the_baseline(runs):
    line = format_summary(_summarize(runs["baseline"]), 1.0, "/logs/run.log").splitlines()[0]

    assert line == (
        "Model: BLESSED (no thresholds declared: accuracy 0.8750 beat the majority-class baseline 0.5000 "
        "on the eval split)"
    )
