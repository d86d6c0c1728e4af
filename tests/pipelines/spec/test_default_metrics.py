"""A spec without `evaluation.metrics` gets the metrics that fit its label, not the binary ones."""

from __future__ import annotations

import pytest
import yaml

from pipelines.load import load_spec

SPECIES = ["Adelie", "Gentoo", "Chinstrap"]


@pytest.fixture
def spec_without_metrics(write_csv, make_spec, tmp_path):
    """A spec for `label` over a CSV whose `company` column holds `kinds`; `evaluation` as given, or no section."""

    def make(label: dict, kinds: list[str], evaluation: dict | None = None):
        rows = [
            [f"{5 + i * 0.75:.2f}", f"{(i % 4) * 0.9:.2f}", f"{0.5 + i * 0.3:.1f}", kinds[i % len(kinds)]]
            for i in range(30)
        ]
        write_csv("taxi.csv", rows=rows)
        path = make_spec(
            {
                "features": {"fare": {"transform": "zscore"}, "trip_miles": {"transform": "zscore"}},
                "label": label,
                "model": {"type": "dnn"},
            }
        )
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        del spec["evaluation"]
        if evaluation is not None:
            spec["evaluation"] = evaluation
        path.write_text(yaml.safe_dump(spec, sort_keys=False, default_flow_style=None), encoding="utf-8")
        return path

    return make


REGRESSION = {"name": "tip", "column": "tips", "task": "regression"}
MULTICLASS = {"name": "kind", "column": "company"}
BINARY_COLUMN = {"name": "kind", "column": "company"}
EXPRESSION = {"name": "big_tipper", "expression": "tips > 0.2 * fare"}


@pytest.mark.parametrize("evaluation", [None, {"top_k": 2}], ids=["no_section", "section_without_metrics"])
@pytest.mark.parametrize(
    "label,kinds,expected",
    [
        (REGRESSION, ["a"], ("mean_squared_error", "mean_absolute_error")),
        (MULTICLASS, SPECIES, ("accuracy",)),
        (MULTICLASS, [f"class{i}" for i in range(7)], ("accuracy",)),
        (BINARY_COLUMN, ["yes", "no"], ("binary_accuracy", "auc")),
        (EXPRESSION, ["a"], ("binary_accuracy", "auc")),
    ],
    ids=["regression", "3_classes", "7_classes", "binary_column", "expression"],
)
def test_unset_metrics_fit_the_label(spec_without_metrics, tmp_path, label, kinds, expected, evaluation):
    resolved = load_spec(str(spec_without_metrics(label, kinds, evaluation)), cwd=str(tmp_path))

    assert resolved.spec.evaluation.metrics == expected


def test_declared_metrics_are_kept(spec_without_metrics, tmp_path):
    path = spec_without_metrics(REGRESSION, ["a"], {"metrics": ["root_mean_squared_error"]})

    assert load_spec(str(path), cwd=str(tmp_path)).spec.evaluation.metrics == ("root_mean_squared_error",)


def test_threshold_on_a_default_metric_needs_no_metrics_list(spec_without_metrics, tmp_path):
    path = spec_without_metrics(MULTICLASS, SPECIES, {"thresholds": {"accuracy": {"min": 0.5}}})

    resolved = load_spec(str(path), cwd=str(tmp_path))

    assert resolved.spec.evaluation.metrics == ("accuracy",)


def test_threshold_outside_the_default_metrics_names_them(spec_without_metrics, spec_problems):
    path = spec_without_metrics(MULTICLASS, SPECIES, {"thresholds": {"auc": {"min": 0.5}}})

    (problem,) = spec_problems(path)

    assert problem.path == "evaluation.thresholds.auc"
    assert "not among this label's default metrics (accuracy)" in problem.message
    assert "Add it to `evaluation.metrics`" in problem.message
