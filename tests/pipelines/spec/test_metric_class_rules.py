"""`rule_metric_classes`: metrics and per-class thresholds checked against the label's classes."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec
from pipelines.spec import rules
from pipelines.spec.metric_rules import rule_metric_classes

SPECIES = ["Adelie", "Gentoo", "Chinstrap"]


def test_the_rule_is_listed():
    assert rule_metric_classes in rules.RULES


@pytest.fixture
def label_spec(write_csv, make_spec):
    """A spec whose classification label `company` holds `kinds`, with `evaluation` as given."""

    def make(kinds: list[str], evaluation: dict):
        rows = [[f"{5 + i * 0.75:.2f}", "1.0", f"{0.5 + i * 0.3:.1f}", kinds[i % len(kinds)]] for i in range(30)]
        write_csv("taxi.csv", rows=rows)
        return make_spec(
            {
                "features": {"fare": {"transform": "zscore"}, "trip_miles": {"transform": "zscore"}},
                "model": {"type": "dnn"},
                "label": {"name": "kind", "column": "company", "task": "classification"},
                "evaluation": evaluation,
            }
        )

    return make


def test_multiclass_metrics_and_per_class_thresholds_are_valid(label_spec, tmp_path):
    evaluation = {
        "metrics": ["accuracy", "precision", "recall", "macro_auc", "top_k_accuracy", "confusion_matrix"],
        "thresholds": {"precision": {"min": 0.8, "classes": ["Gentoo"]}, "macro_auc": {"min": 0.9}},
    }

    resolved = load_spec(str(label_spec(SPECIES, evaluation)), cwd=str(tmp_path))

    assert resolved.spec.evaluation.thresholds["precision"].classes == ("Gentoo",)


@pytest.mark.parametrize(
    "kinds,evaluation,path,message",
    [
        (
            SPECIES,
            {"metrics": ["auc"]},
            "evaluation.metrics[0]",
            "metric `auc` scores a binary label, but the label has 3 classes. Use `macro_auc`",
        ),
        (
            ["yes", "no"],
            {"metrics": ["accuracy", "macro_auc"]},
            "evaluation.metrics[1]",
            "metric `macro_auc` needs 3 or more classes, but the label has 2. Use `auc`",
        ),
        (
            SPECIES,
            {"metrics": ["precision"], "thresholds": {"precision": {"min": 0.8, "classes": ["Gentou"]}}},
            "evaluation.thresholds.precision.classes",
            "`Gentou` is not a class of the label. Did you mean `Gentoo`?",
        ),
        (
            ["yes", "no"],
            {"metrics": ["precision"], "thresholds": {"precision": {"min": 0.8, "classes": ["yes"]}}},
            "evaluation.thresholds.precision.classes",
            "on a label of 2 classes. Remove `classes`.",
        ),
        (
            SPECIES,
            {"metrics": ["confusion_matrix"], "thresholds": {"confusion_matrix": {"min": 0.5}}},
            "evaluation.thresholds.confusion_matrix",
            "cannot gate the blessing",
        ),
    ],
    ids=["auc_on_3_classes", "macro_auc_on_binary", "unknown_class", "classes_on_binary", "confusion_matrix_gate"],
)
def test_metric_that_does_not_fit_the_label_is_a_spec_problem(
    label_spec, spec_problems, kinds, evaluation, path, message
):
    problems = spec_problems(label_spec(kinds, evaluation))

    assert [p.path for p in problems] == [path]
    assert message in problems[0].message
    assert problems[0].line is not None
