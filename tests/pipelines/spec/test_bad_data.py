"""Bad data files stop `python -m pipelines validate` (the real CLI) with the file, column, row and fix.

Each case writes one data file (or folder) and a spec reading it, runs the CLI,
and asserts: exit code 2, every expected fragment in stderr (where: file,
line, column; what was received; how to fix it), and that nothing was written
next to the spec (no pipeline root, no serving folder, no new file).
Messy-but-usable files (a BOM, `NA` cells, any header text) must pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

BASE_ROWS = [f"{5 + i * 0.5:.2f},{(i % 4) * 0.9:.2f},{['x', 'y', 'z'][i % 3]},{i % 2}" for i in range(12)]
HEADER = "fare,tips,company,label"
GOOD = HEADER + "\n" + "\n".join(BASE_ROWS) + "\n"


def _with_cell(row: int, column: int, value: str, text: str = GOOD) -> str:
    """GOOD with the cell at data row `row` (0-based; file line row + 2) and `column` replaced."""
    lines = text.splitlines()
    cells = lines[row + 1].split(",")
    cells[column] = value
    lines[row + 1] = ",".join(cells)
    return "\n".join(lines) + "\n"


def _column(column: int, value: str) -> str:
    lines = GOOD.splitlines()
    rows = []
    for line in lines[1:]:
        cells = line.split(",")
        cells[column] = value
        rows.append(",".join(cells))
    return "\n".join([lines[0], *rows]) + "\n"


SPEC = {
    "pipeline": {"name": "bad_data"},
    "data": {"path": "data.csv"},
    "features": {"fare": {"transform": "zscore"}, "company": {"transform": "vocabulary"}},
    "label": {"name": "target", "column": "label"},
    "model": {"type": "dnn", "hidden_units": [4]},
    "training": {"train_steps": 5},
    "evaluation": {"metrics": ["binary_accuracy"]},
}

# id, data (str: data.csv text; bytes: raw data.csv; dict: file name -> text for a folder), spec overrides,
# fragments that stderr must contain.
CASES = [
    (
        "inf_in_a_numeric_feature",
        _with_cell(3, 0, "inf"),
        {},
        ["data.path", "column `fare`", "data.csv line 5", "`inf`", "non_finite: impute"],
    ),
    (
        "minus_inf_in_a_label_expression_column",
        _with_cell(6, 1, "-inf"),
        {"label": {"name": "target", "expression": "tips > 0.2 * fare"}},
        ["column `tips`", "data.csv line 8", "`-inf`", "data.na_values"],
    ),
    (
        "nan_when_na_values_does_not_list_it",
        _with_cell(0, 0, "NaN"),
        {"data.na_values": [""]},
        ["column `fare`", "data.csv line 2", "`NaN`", "non_finite: impute"],
    ),
    (
        "na_marker_not_in_na_values",
        _with_cell(2, 0, "NA"),
        {"data.na_values": [""]},
        ["features.fare.transform", "holds text", "Received: `NA`", "data.csv line 4", "add it to `data.na_values`"],
    ),
    (
        "question_mark_marker",
        _with_cell(4, 0, "?"),
        {},
        ["features.fare.transform", "Received: `?`", "data.csv line 6", "data.na_values", "`vocabulary` or `hash`"],
    ),
    (
        "label_with_a_single_class",
        _column(3, "1"),
        {},
        ["label.column", "label `label` has a single class (1)", "data.csv", "at least two distinct classes"],
    ),
    (
        "label_with_no_values",
        _column(3, "NA"),
        {},
        ["label.column", "label `label` has no values", "data.csv", "every cell is missing"],
    ),
    (
        "label_expression_that_never_holds",
        GOOD,
        {"label": {"name": "target", "expression": "tips > 1000"}},
        ["label.expression", "has a single class (0)", "at least two distinct classes", "choose another label"],
    ),
    (
        "regression_label_with_one_value",
        _column(1, "2.5"),
        {"label": {"name": "target", "column": "tips", "task": "regression"}, "evaluation.metrics": ["example_count"]},
        ["label.column", "single value (2.5)", "at least two distinct values"],
    ),
    (
        "feature_column_with_no_values",
        _column(0, "N/A"),
        {},
        ["features.fare", "column `fare` has no values", "data.csv", "Remove the feature or fix the data"],
    ),
    (
        "unnamed_header_column",
        GOOD.replace("company,label", ",label", 1),
        {"features": {"fare": {"transform": "zscore"}}},
        ["data.path", "header column(s) [3] have no name", "Name those columns in the header line"],
    ),
    (
        "repeated_header_column",
        GOOD.replace("tips,company", "fare,company", 1),
        {},
        ["data.path", "repeats column(s) ['fare']", "Rename them"],
    ),
    (
        "row_with_too_many_fields",
        _with_cell(5, 2, "x,extra"),
        {},
        ["data.path", "1 malformed row(s)", "line 7 has 5", "Fix or remove those rows"],
    ),
    (
        "empty_file",
        "",
        {},
        ["data.path", "data.csv is empty", "Expected a header line"],
    ),
    (
        "header_only",
        HEADER + "\n",
        {},
        ["data.path", "has a header but no data rows", "Add rows or remove the file"],
    ),
    (
        "latin1_text",
        GOOD.replace("x,", "Zürich,", 1).encode("latin-1"),
        {},
        ["data.path", "is not UTF-8 text", "Save it as UTF-8 CSV"],
    ),
    (
        "unbalanced_quote",
        _with_cell(1, 2, '"x'),
        {},
        ["data.path", "CSV error", "Fix the quoting"],
    ),
    (
        "folder_with_differing_headers",
        {"a.csv": GOOD, "b.csv": GOOD.replace("company", "firm", 1)},
        {"data.path": "data"},
        ["data.path", "b.csv: header differs", "firm"],
    ),
    (
        "feature_typo_for_a_spaced_column_name",
        GOOD.replace("fare", "mean fare", 1),
        {"features": {"mean_fare": {"transform": "zscore"}}},
        ["features.mean_fare", "column `mean_fare` is not in the data", "Did you mean `mean fare`?"],
    ),
    (
        "missing_cells_in_the_label_column",  # Transform stopped on them after `valid`
        _with_cell(9, 3, "", _with_cell(4, 3, "NA")),
        {},
        ["label.column", "label column `label` has no value in 2 of 12 rows", "data.csv line 6", "dropna"],
    ),
    (
        "a_missing_regression_label",  # it trained as 0 before
        _with_cell(2, 3, "NA"),
        {"label": {"name": "target", "column": "label", "task": "regression"}},
        ["label.column", "has no value in 1 of 12 rows", "data.csv line 4", "never guessed"],
    ),
    (
        "spaces_after_the_commas",  # as UCI's adult (census income) data comes
        GOOD.replace(",", ", "),
        {},
        ["features.company", "Did you mean ` company`?", "surrounding spaces", "`skip_initial_space: true`"],
    ),
    (
        "semicolon_separated_read_with_commas",  # as UCI's wine-quality files come
        GOOD.replace(",", ";"),
        {},
        ["data.path", "data.csv: the header reads as one column, `fare;tips;company;label`", 'delimiter: ";"'],
    ),
    (
        "tab_separated_declared_as_semicolons",
        GOOD.replace(",", "\t"),
        {"data.delimiter": ";"},
        ["data.path", "data.csv: the header reads as one column", 'holds "\\t"', 'Add `delimiter: "\\t"`'],
    ),
    (
        "decimal_commas_in_a_semicolon_file",
        "\n".join(line.replace(",", ";").replace(".", ",") for line in GOOD.splitlines()) + "\n",
        {"data.delimiter": ";"},
        ["features.fare.transform", "Received: `5,00` at", "data.csv line 2", "decimal comma", "decimal=','"],
    ),
    (
        "delimiter_of_two_characters",
        GOOD,
        {"data.delimiter": ";;"},
        ["`delimiter` must be one character", "Received: delimiter=';;'"],
    ),
]


def _set(spec: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    node = spec
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


def _write_case(folder: Path, data, overrides: dict) -> Path:
    if isinstance(data, dict):
        (folder / "data").mkdir()
        for name, text in data.items():
            (folder / "data" / name).write_text(text, encoding="utf-8")
    elif isinstance(data, bytes):
        (folder / "data.csv").write_bytes(data)
    else:
        (folder / "data.csv").write_text(data, encoding="utf-8")
    spec = yaml.safe_load(yaml.safe_dump(SPEC))
    for dotted, value in overrides.items():
        _set(spec, dotted, value)
    spec["pipeline"]["root"] = str(folder / "root")
    spec_file = folder / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return spec_file


def _validate(repo_dir: str, spec_file: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", "validate", str(spec_file)],
        cwd=str(spec_file.parent),
        env={**env, "PYTHONPATH": repo_dir},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize(("data", "overrides", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_data_file_stops_validate_naming_where_and_the_fix(tmp_path, repo_dir, data, overrides, fragments):
    spec_file = _write_case(tmp_path, data, overrides)
    before = _tree(tmp_path)
    result = _validate(repo_dir, spec_file)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"{spec_file}:" in result.stderr  # every problem names the spec file (and YAML line)
    for fragment in fragments:
        assert fragment in result.stderr, f"{fragment!r} not in:\n{result.stderr}"
    assert "nothing was run or written" in result.stderr
    assert _tree(tmp_path) == before  # no pipeline root, no serving folder, nothing else


def test_case_table_has_at_least_15_bad_files():
    assert len(CASES) >= 15


@pytest.mark.parametrize(
    ("text", "features", "overrides"),
    [
        ("\ufeff" + GOOD, {"fare": {"transform": "zscore"}}, {}),
        (GOOD.replace("fare", "mean fare", 1), {"mean fare": {"transform": "zscore"}}, {}),
        (GOOD.replace("fare", "température.2", 1), {"température.2": {"transform": "minmax"}}, {}),
        (GOOD.replace("fare", '"2nd, fare"', 1), {"2nd, fare": {"transform": "log"}}, {}),
        (_with_cell(2, 0, "NA"), {"fare": {"transform": "zscore"}}, {}),
        (_with_cell(2, 0, "-"), {"fare": {"transform": "zscore"}}, {"data.na_values": ["", "-"]}),
        (_with_cell(3, 0, "inf"), {"fare": {"transform": "zscore"}}, {"data.checks": {"non_finite": "impute"}}),
        (GOOD.replace(",", ";"), {"fare": {"transform": "zscore"}}, {"data.delimiter": ";"}),
        ({"part.tsv": GOOD.replace(",", "\t")}, {"fare": {"transform": "zscore"}}, {"data.path": "data"}),
        (
            _with_cell(2, 0, "?", GOOD).replace(",", ", "),
            {"fare": {"transform": "zscore"}},
            {"data.skip_initial_space": True, "data.na_values": ["", "?"]},
        ),
    ],
    ids=[
        "utf8_bom",
        "space_in_name",
        "unicode_and_dot",
        "quoted_comma_digit",
        "na_cell",
        "custom_marker",
        "impute",
        "semicolons_declared",
        "tsv_by_name",
        "spaces_after_commas_skipped",
    ],
)
def test_messy_but_usable_file_is_valid(tmp_path, repo_dir, text, features, overrides):
    spec_file = _write_case(
        tmp_path, text, {"features": {**features, "company": {"transform": "vocabulary"}}, **overrides}
    )
    result = _validate(repo_dir, spec_file)
    assert result.returncode == 0, result.stderr
    assert "valid (2 features" in result.stdout


def test_constant_feature_is_a_warning_not_an_error(tmp_path, repo_dir):
    spec_file = _write_case(tmp_path, _column(2, "same"), {})
    result = _validate(repo_dir, spec_file)
    assert result.returncode == 0, result.stderr
    assert "warning: features.company: column `company` holds the same value in every row" in result.stderr


def test_log_of_a_column_with_negative_numbers_is_a_warning(tmp_path, repo_dir):
    spec_file = _write_case(tmp_path, _with_cell(5, 0, "-2.5"), {"features": {"fare": {"transform": "log"}}})
    result = _validate(repo_dir, spec_file)
    assert result.returncode == 0, result.stderr
    assert "warning: features.fare.transform: column `fare` holds negative numbers (the least: -2.5)" in result.stderr
    (tmp_path / "clean").mkdir()
    clean = _write_case(tmp_path / "clean", GOOD, {"features": {"fare": {"transform": "log"}}})
    assert "negative numbers" not in _validate(repo_dir, clean).stderr
