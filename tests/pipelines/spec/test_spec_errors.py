"""The named rules and the data checks: a well-typed spec that cannot run is rejected.

Each bad spec is the minimal valid one with one change; the problem must name
the YAML path, the line to edit and how to fix it.
"""

from __future__ import annotations

import pytest

from pipelines.load import load_spec
from pipelines.spec import SpecError

HEADER = "fare,tips,trip_miles,company\n"
ROW = "7.25,1.5,2.1,Flash Cab\n"

# (overrides, YAML path, text on the reported line, fragments of the message)
BAD_RULES = {
    "threshold-on-undeclared-metric": (
        {"evaluation.thresholds": {"binary_accuracy": {"min": 0.5}, "precision": {"min": 0.7}}},
        "evaluation.thresholds.precision",
        "precision: {min: 0.7}",
        [
            "threshold on `precision`, which `evaluation.metrics` does not declare.",
            "Add it to `evaluation.metrics` or fix the name.",
        ],
    ),
    "threshold-on-misspelt-metric": (
        {"evaluation.thresholds": {"binary_acuracy": {"min": 0.5}}},
        "evaluation.thresholds.binary_acuracy",
        "binary_acuracy:",
        ["threshold on `binary_acuracy`", "Did you mean `binary_accuracy`?"],
    ),
    "unknown-metric": (
        {"evaluation.metrics": ["binary_accuracy", "acu"]},
        "evaluation.metrics[1]",
        "metrics: [",
        [
            "unknown metric `acu` for a classification label. Did you mean `auc`?",
            "Expected one of: binary_accuracy, auc, precision, recall, binary_crossentropy, example_count, accuracy, "
            "macro_auc, weighted_auc, top_k_accuracy, sparse_categorical_crossentropy, confusion_matrix.",
        ],
    ),
    "regression-metric-on-classification": (
        {"evaluation.metrics": ["binary_accuracy", "mean_squared_error"]},
        "evaluation.metrics[1]",
        "metrics: [",
        ["unknown metric `mean_squared_error` for a classification label."],
    ),
    "feature-not-in-header": (
        {"features.fares": {"transform": "zscore"}},
        "features.fares",
        "  fares:",
        [
            "column `fares` is not in the data (",
            "taxi.csv). Did you mean `fare`?",
            "Columns: fare, tips, trip_miles, company.",
        ],
    ),
    "label-expression-column-not-in-header": (
        {"label.expression": "tip > 0.2 * fare"},
        "label.expression",
        "label:",
        ["column `tip` used in the expression is not in the data (", "Did you mean `tips`?"],
    ),
    "label-expression-on-text-column": (
        {"label.expression": "company > 1"},
        "label.expression",
        "label:",
        [
            "column `company` holds text; expressions use it as a number.",
            "text comparison such as `company == 'value'`",
        ],
    ),
    "label-expression-with-a-call": (
        {"label.expression": "tips > max(fare, 1)"},
        "label.expression",
        "label:",
        ["`max(fare, 1)` is not allowed in `expression`.", "Use column names, numbers, + - * /"],
    ),
    "label-column-not-in-header": (
        {
            "label": {"name": "tip_amount", "column": "tipz", "task": "regression"},
            "evaluation": {"metrics": ["mean_squared_error"]},
        },
        "label.column",
        "label:",
        ["label column `tipz` is not in the data (", "Did you mean `tips`?"],
    ),
    "label-column-is-a-feature": (
        {
            "label": {"name": "fare_amount", "column": "fare", "task": "regression"},
            "evaluation": {"metrics": ["mean_squared_error"]},
        },
        "label.column",
        "label:",
        ["the label column `fare` is also listed as a feature: that leaks the answer. Remove it from `features`."],
    ),
    "label-name-is-a-feature": (
        {"label.name": "fare"},
        "label.name",
        "label:",
        ["label name `fare` is also a feature. Give the label its own name."],
    ),
    "zscore-on-text-column": (
        {"features.company": {"transform": "zscore"}, "model.type": "dnn"},
        "features.company.transform",
        "  company:",
        [
            "transform `zscore` needs a numeric column, but `company` holds text. Received: `Flash Cab` at ",
            "If that text marks a missing value, add it to `data.na_values`; if the column is categorical, "
            "use `vocabulary` or `hash`.",
        ],
    ),
    "data-path-missing": (
        {"data.path": "no_such.csv"},
        "data.path",
        "data:",
        ["no_such.csv does not exist. Fix the path (relative paths start at the spec file's folder)."],
    ),
    "data-format-unknown": (
        {"data.path": "spec.yaml"},
        "data.path",
        "data:",
        ["cannot tell the format of", "Add `format:` under `data:` (csv, tfrecord, parquet, avro, jsonl)"],
    ),
    "splits-without-eval": (
        {"data.splits": {"train": 3}},
        "data.splits",
        "splits: {train: 3}",
        ["a `eval` split is required. Received splits: ['train']. Add `eval: <weight>`."],
    ),
    "split-weight-zero": (
        {"data.splits": {"train": 2, "eval": 0}},
        "data.splits.eval",
        "splits: {train: 2, eval: 0}",
        ["split weights must be at least 1. Received: eval=0."],
    ),
    "build-model-not-dotted": (
        {"model.build_model": "my_models.build"},
        "model.build_model",
        "model:",
        ["expected `package.module:function`. Received: `my_models.build`."],
    ),
    "build-model-module-missing": (
        {"model.build_model": "no_such_pkg_zz.models:build"},
        "model.build_model",
        "model:",
        ["module `no_such_pkg_zz.models` cannot be imported. Install it, or run from the folder that holds it."],
    ),
    "transform-module-not-dotted": (
        {"transform.module": "preprocess"},
        "transform.module",
        "transform: {module",
        ["expected `package.module:function`. Received: `preprocess`."],
    ),
    "schema-missing": (
        {"schema": "schema.pbtxt"},
        "schema",
        "schema:",
        ["schema.pbtxt does not exist. Fix the path or remove `schema` to infer one."],
    ),
    "unusable-pipeline-name": (
        {"pipeline.name": "9 lives", "push.model_name": "taxi"},
        "pipeline.name",
        "pipeline:",
        ["`9 lives` is not a usable name. Use letters, digits, `_`, `.`, `-`, starting with a letter."],
    ),
    "wide-and-deep-without-categorical": (
        {"features": {"fare": {"transform": "zscore"}}, "model.type": "wide_and_deep"},
        "model.type",
        "model:",
        ["`wide_and_deep` needs at least one categorical feature", "Use `type: dnn`."],
    ),
    "hidden-unit-zero": (
        {"model": {"type": "dnn", "hidden_units": [8, 0]}},
        "model.hidden_units",
        "hidden_units: [8, 0]",
        ["expected a list of layer widths, each at least 1. Received: [8, 0]."],
    ),
    "no-features": (
        {"features": {}, "model.type": "dnn"},
        "features",
        "features:",
        ["no features declared. Add at least one column under `features`."],
    ),
}


@pytest.mark.parametrize("overrides, path, line_text, fragments", list(BAD_RULES.values()), ids=list(BAD_RULES))
def test_rule_problem_names_path_line_and_fix(
    make_spec, spec_problems, line_with, overrides, path, line_text, fragments
):
    spec_file = make_spec(overrides)

    problems = spec_problems(spec_file)

    assert [p.path for p in problems] == [path]
    assert problems[0].file == str(spec_file)
    assert problems[0].line == line_with(spec_file, line_text)
    for fragment in fragments:
        assert fragment in problems[0].message


# (CSV text, fragments of the message after "<file>")
BAD_CSVS = {
    "empty": ("", [" is empty. Expected a header line and data rows."]),
    "header-only": (HEADER, [" has a header but no data rows. Add rows or remove the file."]),
    "malformed-rows": (
        HEADER + ROW + "7.25,1.5,Flash Cab\n" + ROW + "7.25,1.5,2.1,Flash,Cab\n" + ROW,
        [
            ": 2 malformed row(s): expected 4 fields like the header; line 3 has 3, line 5 has 5. "
            "Fix or remove those rows."
        ],
    ),
    "many-malformed-rows": (
        HEADER + "1,2\n" * 7,
        [": 7 malformed row(s)", "line 2 has 2, line 3 has 2, line 4 has 2, line 5 has 2, line 6 has 2 (and 2 more)."],
    ),
    "repeated-header-column": (
        "fare,tips,fare,company\n" + ROW,
        [": the header repeats column(s) ['fare']. Rename them."],
    ),
    "column-without-values": (
        HEADER + "7.25,1.5,2.1,\n" * 2 + "7.25,0.5,2.1,\n",  # two label classes: only `company` is wrong
        None,
    ),
}


@pytest.mark.parametrize("text, fragments", list(BAD_CSVS.values()), ids=list(BAD_CSVS))
def test_unusable_csv_is_reported_with_file_and_line(make_spec, write_csv, spec_problems, line_with, text, fragments):
    spec_file = make_spec()
    data_file = write_csv("taxi.csv", text=text)

    problems = spec_problems(spec_file)

    if fragments is None:  # the file reads, but a feature's column is blank
        assert [p.path for p in problems] == ["features.company"]
        assert problems[0].message == (
            f"column `company` has no values in {data_file}. Remove the feature or fix the data."
        )
        return
    assert [p.path for p in problems] == ["data.path"]
    assert problems[0].line == line_with(spec_file, "data:")
    assert problems[0].message.startswith(str(data_file))
    for fragment in fragments:
        assert fragment in problems[0].message


def test_csv_that_is_not_utf8_is_reported(make_spec, tmp_path, spec_problems):
    spec_file = make_spec()
    (tmp_path / "taxi.csv").write_bytes((HEADER + "7.25,1.5,2.1,Caf\xe9 Cab\n").encode("latin-1"))

    (problem,) = spec_problems(spec_file)

    assert problem.path == "data.path"
    assert problem.message.startswith(f"{tmp_path / 'taxi.csv'} is not UTF-8 text (")
    assert problem.message.endswith("Save it as UTF-8 CSV.")


def test_missing_data_path_is_named_absolute(make_spec, tmp_path, spec_problems):
    (problem,) = spec_problems(make_spec({"data.path": "raw/taxi.csv"}))

    assert problem.message.startswith(f"{tmp_path / 'raw' / 'taxi.csv'} does not exist.")


def test_empty_data_folder_is_reported(make_spec, tmp_path, spec_problems):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / ".hidden.csv").write_text(HEADER + ROW, encoding="utf-8")

    (problem,) = spec_problems(make_spec({"data.path": "raw"}))

    assert problem.path == "data.path"
    assert problem.message == f"folder {tmp_path / 'raw'} has no data files. Put CSV or TFRecord files in it."


def test_rule_problems_are_all_reported_at_once(make_spec, spec_problems, line_with):
    spec_file = make_spec(
        {
            "data.splits": {"train": 1},
            "features.fares": {"transform": "zscore"},
            "evaluation.metrics": ["binary_accuracy", "acu"],
            "model.build_model": "models",
            "schema": "schema.pbtxt",
        }
    )

    problems = spec_problems(spec_file)

    assert [p.path for p in problems] == [
        "data.splits",
        "features.fares",
        "evaluation.metrics[1]",
        "model.build_model",
        "schema",
    ]
    assert [p.line for p in problems] == [
        line_with(spec_file, "splits:"),
        line_with(spec_file, "  fares:"),
        line_with(spec_file, "metrics: ["),
        line_with(spec_file, "build_model"),
        line_with(spec_file, "schema:"),
    ]


def test_schema_problems_stop_before_the_rules(make_spec, spec_problems):
    problems = spec_problems(make_spec({"training.batch_size": "big", "data.path": "no_such.csv"}))

    assert [p.path for p in problems] == ["training.batch_size"]


def test_existing_schema_and_module_pass(make_spec, tmp_path):
    (tmp_path / "schema.pbtxt").write_text("", encoding="utf-8")
    spec_file = make_spec({"schema": "schema.pbtxt", "transform.module": "json.decoder:JSONDecoder"})

    resolved = load_spec(str(spec_file), cwd=str(tmp_path))

    assert resolved.schema_path == str(tmp_path / "schema.pbtxt")
    assert resolved.spec.transform.module == "json.decoder:JSONDecoder"


def test_bad_pipeline_name_is_reported_once(make_spec, spec_problems):
    problems = spec_problems(make_spec({"pipeline.name": "9 lives"}))

    assert [p.path for p in problems] == ["pipeline.name"]


def test_package_path_in_a_missing_package_is_a_spec_error(make_spec, spec_problems):
    problems = spec_problems(make_spec({"data.path": "package://no_such_pkg_zz.sub/data.csv"}))

    assert [p.path for p in problems] == ["data.path"]
    assert "no_such_pkg_zz" in problems[0].message


def test_package_path_in_a_missing_top_level_package_is_reported(make_spec, spec_problems):
    (problem,) = spec_problems(make_spec({"data.path": "package://no_such_pkg_zz/data.csv"}))

    assert problem.path == "data.path"
    assert problem.message.startswith("<package `no_such_pkg_zz` is not installed>/data.csv does not exist.")


def test_header_followed_by_blank_lines_has_no_data_rows(make_spec, write_csv, spec_problems):
    spec_file = make_spec()
    write_csv("taxi.csv", text=HEADER + "\n\n")

    problems = spec_problems(spec_file)

    assert [p.path for p in problems] == ["data.path"]
    assert "has a header but no data rows" in problems[0].message


def test_unclosed_quote_is_reported(make_spec, write_csv, spec_problems):
    spec_file = make_spec()
    write_csv("taxi.csv", text=HEADER + ROW + '7.25,1.5,2.1,"Flash Cab\n' + ROW * 3)

    problems = spec_problems(spec_file)

    assert [p.path for p in problems] == ["data.path"]
    assert "Fix the quoting in the file." in problems[0].message


def test_spec_error_is_a_value_error_listing_problems(make_spec, tmp_path):
    with pytest.raises(ValueError) as caught:
        load_spec(str(make_spec({"data.splits": {"train": 1}})), cwd=str(tmp_path))

    assert isinstance(caught.value, SpecError)
    assert "data.splits: a `eval` split is required." in str(caught.value)
