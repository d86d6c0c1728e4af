"""`label.missing`: rows without a label are refused (`error`, the default) or left out (`drop`)."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec
from pipelines.spec.label_missing import DROP_STEP

SPECIES = ["Adelie", "Gentoo", "Chinstrap"]


@pytest.fixture
def gappy_spec(write_csv, make_spec):
    """A spec whose label column `company` has no value in rows 4 and 9 (file lines 5 and 10)."""

    def make(label: dict | None = None, **overrides):
        rows = [[f"{5 + i * 0.75:.2f}", "1.0", f"{0.5 + i * 0.3:.1f}", SPECIES[i % 3]] for i in range(30)]
        rows[3][3] = rows[8][3] = ""
        write_csv("taxi.csv", rows=rows)
        return make_spec(
            {
                "features": {"fare": {"transform": "zscore"}, "trip_miles": {"transform": "zscore"}},
                "model": {"type": "dnn"},
                "label": {"name": "kind", "column": "company", **(label or {})},
                "evaluation": {"metrics": ["accuracy"]},
                **overrides,
            }
        )

    return make


def test_missing_labels_are_refused_by_default_with_the_drop_option_named(gappy_spec, spec_problems):
    (problem,) = spec_problems(gappy_spec())

    assert problem.path == "label.column"
    assert "has no value in 2 of 30 rows (the first: " in problem.message
    assert "Add `missing: drop` under `label:`" in problem.message


def test_drop_is_valid_says_how_many_and_adds_the_step(gappy_spec, tmp_path, capsys):
    resolved = load_spec(str(gappy_spec({"missing": "drop"})), cwd=str(tmp_path))

    note = capsys.readouterr().err
    assert "note: label.missing: 2 of 30 rows have no value in label column `company`" in note
    assert "taxi.csv line 5" in note
    (step,) = resolved.spec.steps
    assert step.name == DROP_STEP
    assert dict(step.parameters) == {"column": "company"}
    assert step.inputs == {"examples": "ExampleGen.examples"} and step.replaces == "ExampleGen.examples"


def test_error_adds_no_step(make_spec, tmp_path):
    resolved = load_spec(str(make_spec()), cwd=str(tmp_path))

    assert resolved.spec.label.missing == "error"
    assert resolved.spec.steps == []


def test_an_unknown_value_names_the_allowed_ones(gappy_spec, spec_problems):
    (problem,) = spec_problems(gappy_spec({"missing": "skip"}))

    assert problem.path == "label.missing"
    assert "expected one of `error`, `drop`. Received: `skip`" in problem.message


def test_drop_with_an_expression_label_is_refused(make_spec, spec_problems):
    (problem,) = spec_problems(
        make_spec({"label": {"name": "big_tipper", "expression": "tips > 0.2 * fare", "missing": "drop"}})
    )

    assert problem.path == "label"
    assert "`missing` is for a `column` label" in problem.message


def test_drop_with_a_step_replacing_the_examples_is_refused(gappy_spec, spec_problems):
    step = {
        "name": "Short",
        "uses": "row_filter",
        "inputs": {"examples": "ExampleGen.examples"},
        "parameters": {"expression": "fare > 1"},
        "replaces": "ExampleGen.examples",
    }
    (problem,) = spec_problems(gappy_spec({"missing": "drop"}, steps=[step]))

    assert problem.path == "label.missing"
    assert "step `Short` replaces it too" in problem.message
