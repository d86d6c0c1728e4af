"""The dataclass schema: unknown keys, wrong types, choices and required keys.

Each bad spec is the minimal valid one with one change; the problem must name
the YAML path, the line to edit and say what was expected and received.
"""

from __future__ import annotations

import pytest

from pipelines.load import load_spec, parse_spec
from pipelines.spec import PipelineSpec, SpecError
from pipelines.spec.models import FeatureSpec, ThresholdSpec, TrainingSpec
from pipelines.spec.typed import build
from pipelines.spec.yaml_source import read_yaml

TIPPER = "tips > 0.2 * fare"

# (overrides, YAML path, text on the reported line, fragments of the message)
BAD_SPECS = {
    "unknown-section": (
        {"trainig": {"batch_size": 8}},
        "trainig",
        "trainig:",
        [
            "unknown key `trainig`.",
            "Did you mean `training`?",
            "Expected one of: `pipeline`, `data`, `features`",
            "Remove or rename it.",
        ],
    ),
    "unknown-training-key": (
        {"training.bach_size": 16},
        "training.bach_size",
        "bach_size: 16",
        ["unknown key `bach_size`.", "Did you mean `batch_size`?", "`learning_rate`", "Remove or rename it."],
    ),
    "unknown-feature-option": (
        {"features.trip_miles": {"transform": "bucketize", "bucket": 4}},
        "features.trip_miles.bucket",
        "  trip_miles:",
        ["unknown key `bucket`.", "Did you mean `buckets`?"],
    ),
    "unknown-key-without-suggestion": (
        {"pipeline.colour": "blue"},
        "pipeline.colour",
        "pipeline:",
        ["unknown key `colour`. Expected one of: `name`, `root`, `caching`. Remove or rename it."],
    ),
    "string-for-int": (
        {"training.batch_size": "big"},
        "training.batch_size",
        "training:",
        ["expected a whole number. Received: `big` (str)."],
    ),
    "bool-for-int": (
        {"training.train_steps": True},
        "training.train_steps",
        "training:",
        ["expected a whole number. Received: `true` (true/false)."],
    ),
    "float-for-int": (
        {"training.batch_size": 8.5},
        "training.batch_size",
        "training:",
        ["expected a whole number. Received: `8.5` (float)."],
    ),
    "string-for-float": (
        {"training.learning_rate": "fast"},
        "training.learning_rate",
        "training:",
        ["expected a number. Received: `fast` (str)."],
    ),
    "string-for-list": (
        {"evaluation.metrics": "auc"},
        "evaluation.metrics",
        "metrics: auc",
        ["expected a list. Received: `auc` (str)."],
    ),
    "list-for-section": (
        {"training": [1, 2]},
        "training",
        "training:",
        ["expected a mapping of settings. Received: a list."],
    ),
    "list-for-number-or-string": (
        {"features.fare.fill": [0]},
        "features.fare.fill",
        "fill: [0]",
        ["expected a number or a string. Received: a list."],
    ),
    "bad-split-weight-type": (
        {"data.splits": {"train": "two", "eval": 1}},
        "data.splits.train",
        "splits:",
        ["expected a whole number. Received: `two` (str)."],
    ),
    "bad-transform": (
        {"features.fare.transform": "zscor"},
        "features.fare.transform",
        "  fare:",
        [
            "expected one of `zscore`, `minmax`, `log`, `identity`, `vocabulary`, `bucketize`, `hash`, `categorical`, "
            "`image`, `text`.",
            "Received: `zscor` (str). Did you mean `zscore`?",
        ],
    ),
    "bad-optimizer": (
        {"training.optimizer": "adamw"},
        "training.optimizer",
        "training:",
        ["expected one of `adam`, `sgd`, `rmsprop`, `adagrad`. Received: `adamw` (str). Did you mean `adam`?"],
    ),
    "bad-format": (
        {"data.format": "xlsx"},
        "data.format",
        "data:",
        ["expected one of `csv`, `tfrecord`, `image_folder`, `parquet`, `avro`, `jsonl`. Received: `xlsx` (str)."],
    ),
    "missing-label-name": (
        {"label": {"expression": TIPPER}},
        "label.name",
        "label:",
        ["`name` is required. Add it under `label`."],
    ),
    "missing-pipeline-name": (
        {"pipeline": {"root": "out"}},
        "pipeline.name",
        "pipeline:",
        ["`name` is required. Add it under `pipeline`."],
    ),
    "bucketize-without-buckets": (
        {"features.trip_miles": {"transform": "bucketize"}},
        "features.trip_miles",
        "  trip_miles:",
        ["transform `bucketize` needs `buckets`. Add `buckets: <a whole number>`."],
    ),
    "hash-without-hash-buckets": (
        {"features.company": {"transform": "hash"}},
        "features.company",
        "  company:",
        ["transform `hash` needs `hash_buckets`."],
    ),
    "categorical-without-num-buckets": (
        {"features.company": {"transform": "categorical"}},
        "features.company",
        "  company:",
        ["transform `categorical` needs `num_buckets`."],
    ),
    "zero-buckets": (
        {"features.trip_miles": {"transform": "bucketize", "buckets": 0}},
        "features.trip_miles",
        "  trip_miles:",
        ["`buckets` must be at least 1. Received: buckets=0."],
    ),
    "label-column-and-expression": (
        {"label.column": "tips"},
        "label",
        "label:",
        ["give exactly one of `column` or `expression`."],
    ),
    "label-neither-column-nor-expression": (
        {"label": {"name": "big_tipper"}},
        "label",
        "label:",
        ["give exactly one of `column` or `expression`."],
    ),
    "zero-batch-size": (
        {"training.batch_size": 0},
        "training",
        "training:",
        ["`batch_size` must be at least 1. Received: batch_size=0."],
    ),
    "negative-learning-rate": (
        {"training.learning_rate": -0.1},
        "training",
        "training:",
        ["`learning_rate` must be above 0. Received: learning_rate=-0.1."],
    ),
    "threshold-without-bound": (
        {"evaluation.thresholds": {"binary_accuracy": {"higher_is_better": True}}},
        "evaluation.thresholds.binary_accuracy",
        "binary_accuracy: {higher_is_better",
        ["a threshold needs at least one of `min`, `max` or `max_regression`."],
    ),
}


@pytest.mark.parametrize("overrides, path, line_text, fragments", list(BAD_SPECS.values()), ids=list(BAD_SPECS))
def test_bad_spec_names_path_line_and_fix(make_spec, spec_problems, line_with, overrides, path, line_text, fragments):
    spec_file = make_spec(overrides)

    problems = spec_problems(spec_file)

    assert [p.path for p in problems] == [path]
    problem = problems[0]
    assert problem.file == str(spec_file)
    assert problem.line == line_with(spec_file, line_text)
    for fragment in fragments:
        assert fragment in problem.message
    assert str(problem) == f"{spec_file}:{problem.line}: {path}: {problem.message}"


def test_schema_problems_are_all_reported_at_once(make_spec, spec_problems, line_with):
    spec_file = make_spec(
        {
            "trainig": {"seed": 1},
            "training.batch_size": "big",
            "features.fare.transform": "zscor",
            "label": {"expression": TIPPER},
        }
    )

    problems = spec_problems(spec_file)

    assert [p.path for p in problems] == ["trainig", "features.fare.transform", "label.name", "training.batch_size"]
    assert [p.line for p in problems] == [
        line_with(spec_file, "trainig:"),
        line_with(spec_file, "  fare:"),
        line_with(spec_file, "label:"),
        line_with(spec_file, "training:"),
    ]
    assert "Did you mean `training`?" in problems[0].message
    assert "Did you mean `zscore`?" in problems[1].message


def test_every_required_section_is_reported_for_an_empty_file(tmp_path):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text("# nothing yet\n", encoding="utf-8")

    with pytest.raises(SpecError) as caught:
        load_spec(str(spec_file))

    assert [p.path for p in caught.value.problems] == ["pipeline", "data", "features", "label"]
    assert caught.value.problems[0].message == "`pipeline` is required. Add it under `the top level`."
    assert all(p.line is None for p in caught.value.problems)


def test_top_level_list_is_rejected():
    with pytest.raises(SpecError) as caught:
        parse_spec("- pipeline\n- data\n", "spec.yaml")

    (problem,) = caught.value.problems
    assert (problem.path, problem.line) == ("", 1)
    assert problem.message == "expected a mapping of settings. Received: a list."
    assert str(problem) == "spec.yaml:1: <root>: expected a mapping of settings. Received: a list."


def test_spec_error_message_lists_every_problem(make_spec):
    spec_file = make_spec({"training.bach_size": 1, "training.sed": 2})

    with pytest.raises(SpecError) as caught:
        load_spec(str(spec_file))

    lines = str(caught.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{spec_file}:") and "training.bach_size: unknown key `bach_size`." in lines[0]
    assert "training.sed: unknown key `sed`. Did you mean `seed`?" in lines[1]


def test_defaults_fill_sections_left_out(make_spec, tmp_path):
    resolved = load_spec(str(make_spec({"training": None})), cwd=str(tmp_path))

    assert resolved.spec.training == TrainingSpec()
    assert resolved.spec.data.splits == {"train": 2, "eval": 1}
    assert resolved.spec.model.type == "wide_and_deep"
    assert resolved.spec.label.task == "classification"


def test_values_are_typed_as_the_schema_says(make_spec, tmp_path):
    spec_file = make_spec(
        {
            "training.learning_rate": 1,
            "model.hidden_units": [16, 8],
            "features.fare": {"transform": "zscore", "fill": 2},
            "features.company": {"transform": "vocabulary", "fill": "unknown"},
        }
    )

    spec = load_spec(str(spec_file), cwd=str(tmp_path)).spec

    assert spec.training.learning_rate == 1.0 and isinstance(spec.training.learning_rate, float)
    assert spec.model.hidden_units == (16, 8)
    assert spec.features["fare"] == FeatureSpec(transform="zscore", fill=2.0)
    assert spec.features["company"].fill == "unknown"
    assert spec.evaluation.thresholds == {"binary_accuracy": ThresholdSpec(min=0.5)}
    assert list(spec.features) == ["fare", "trip_miles", "company"]


def test_build_returns_problems_instead_of_raising():
    source = read_yaml("pipeline: {name: a}\nlabel: {name: y, column: y, task: regresion}\n", "spec.yaml")

    spec, problems = build(PipelineSpec, source)

    assert spec is None
    assert [(p.path, p.line) for p in problems] == [("data", 1), ("features", 1), ("label.task", 2)]
    assert "Did you mean `regression`?" in problems[2].message
