"""`evaluation.slices` and `per_slice` thresholds: checked against the data before anything runs."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec
from pipelines.spec.data_rules import columns_used


def _evaluation(**extra):
    return {"metrics": ["binary_accuracy"], "thresholds": {"binary_accuracy": {"min": 0.5}}, **extra}


def test_slice_columns_in_the_data_are_valid_and_kept_by_example_gen(make_spec, tmp_path):
    evaluation = _evaluation(slices=[["company"], ["tips", "company"]], slice_buckets=3)
    evaluation["thresholds"]["binary_accuracy"].update(per_slice=True, min_examples=5)

    resolved = load_spec(str(make_spec({"evaluation": evaluation})), cwd=str(tmp_path))

    assert resolved.spec.evaluation.slices == (("company",), ("tips", "company"))
    assert resolved.spec.evaluation.thresholds["binary_accuracy"].per_slice is True
    # `tips` is no feature (the label reads it), but a slice column must reach the Evaluator either way.
    assert "tips" in columns_used(resolved.spec)


def test_a_slice_column_that_is_not_a_feature_is_written_by_example_gen(make_spec, tmp_path, write_csv):
    rows = [
        [f"{5 + i:.2f}", f"{i % 4:.2f}", f"{1 + i * 0.3:.1f}", "Flash Cab", "north" if i % 2 else "south"]
        for i in range(30)
    ]
    write_csv("taxi.csv", header=["fare", "tips", "trip_miles", "company", "region"], rows=rows)
    resolved = load_spec(str(make_spec({"evaluation": _evaluation(slices=[["region"]])})), cwd=str(tmp_path))

    assert "region" in columns_used(resolved.spec)


def test_a_slice_column_missing_from_the_data_is_named_with_its_yaml_path(make_spec, spec_problems, line_with):
    path = make_spec({"evaluation": _evaluation(slices=[["company"], ["trip_mile", "company"]])})

    (problem,) = spec_problems(path)

    assert problem.path == "evaluation.slices[1][0]"
    assert "slice column `trip_mile` is not in the data" in problem.message
    assert "trip_miles" in problem.message  # did you mean / the columns
    assert problem.line == line_with(path, "trip_mile,")


def test_per_slice_without_slices_is_refused(make_spec, spec_problems):
    evaluation = _evaluation()
    evaluation["thresholds"]["binary_accuracy"]["per_slice"] = True

    (problem,) = spec_problems(make_spec({"evaluation": evaluation}))

    assert problem.path == "evaluation.thresholds.binary_accuracy.per_slice"
    assert "`evaluation.slices` is empty" in problem.message


@pytest.mark.parametrize(
    ("evaluation", "path", "words"),
    [
        ({"slices": [[]]}, "evaluation.slices", "one or more distinct columns"),
        ({"slices": [["company", "company"]]}, "evaluation.slices", "one or more distinct columns"),
        ({"slices": "company"}, "evaluation.slices", "expected a list"),
        ({"slices": ["company"]}, "evaluation.slices[0]", "Write it as a list: `[company]`."),
        ({"slices": [["company"], ["company"]]}, "evaluation.slices", "`slices[1]` repeats `slices[0]`"),
        ({"slice_buckets": 1}, "evaluation.slice_buckets", "`slice_buckets` must be between 2 and 100"),
        ({"slicez": [["company"]]}, "evaluation.slicez", "unknown key `slicez`"),
    ],
)
def test_bad_slice_settings_are_named(make_spec, spec_problems, evaluation, path, words):
    problems = spec_problems(make_spec({"evaluation": _evaluation(**evaluation)}))

    assert any(p.path == path and words in p.message for p in problems), [(p.path, p.message) for p in problems]


def test_settings_of_one_evaluation_section_are_all_named_each_at_its_key(make_spec, spec_problems, line_with):
    """Range checks of the section are reported together, each on its own key's line."""
    spec_file = make_spec({"evaluation": _evaluation(slice_buckets=0, confidence=1.5, top_k=0)})

    problems = {p.path: p for p in spec_problems(spec_file)}

    assert set(problems) == {"evaluation.slice_buckets", "evaluation.confidence", "evaluation.top_k"}
    assert problems["evaluation.confidence"].line == line_with(spec_file, "confidence: 1.5")


def test_min_examples_without_per_slice_is_refused(make_spec, spec_problems):
    evaluation = _evaluation()
    evaluation["thresholds"]["binary_accuracy"]["min_examples"] = 100

    (problem,) = spec_problems(make_spec({"evaluation": evaluation}))

    assert problem.path == "evaluation.thresholds.binary_accuracy"
    assert "`min_examples` applies to per-slice gates only" in problem.message


def test_min_examples_must_be_positive(make_spec, spec_problems):
    evaluation = _evaluation(slices=[["company"]])
    evaluation["thresholds"]["binary_accuracy"].update(per_slice=True, min_examples=0)

    problems = spec_problems(make_spec({"evaluation": evaluation}))

    assert any("`min_examples` must be at least 1" in p.message for p in problems)
