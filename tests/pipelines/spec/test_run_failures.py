"""A run that fails on data `validate` did not see says so in one line: file, column, row, fix."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from pipelines.load import load_spec
from pipelines.spec.run_failures import explain_failure

# What Transform raises (TensorFlow's message inside tf.Transform's) when a numeric column holds text.
TF_ERROR = (
    'An error occurred while trying to apply the transformation: "Graph execution error:\n\nDetected at node '
    "'transform/StringToNumber' defined at (most recent call last):\nNode: 'transform/StringToNumber'\n"
    "StringToNumberOp could not correctly convert string: oops\n\t [[{node transform/StringToNumber}}]]\n"
)


def test_text_in_a_numeric_column_is_named_with_its_file_and_line(make_spec, data_csv, tmp_path):
    resolved = load_spec(str(make_spec()), cwd=str(tmp_path))
    with open(data_csv, "a", encoding="utf-8") as handle:
        handle.write("oops,1.0,2.0,Flash Cab\n")  # after `validate` read the file: line 32

    line = explain_failure(resolved, ValueError(TF_ERROR))

    assert line is not None and "\n" not in line
    assert line.startswith("column `fare` holds text, but `features.fare.transform: zscore` reads it as a number: ")
    assert f"{data_csv} line 32 holds 'oops'" in line
    assert "Fix that cell (or list its text in `data.na_values`), then run again." in line


def test_text_the_data_no_longer_holds_is_still_one_line(make_spec, tmp_path):
    resolved = load_spec(str(make_spec()), cwd=str(tmp_path))

    line = explain_failure(resolved, ValueError(TF_ERROR))

    assert line.startswith("a column the spec reads as a number holds the text 'oops'")
    assert "Run `python -m pipelines validate` on the spec to find the file and row" in line


def test_data_gate_s_unexpected_strings_are_explained_by_the_data(make_spec, data_csv, tmp_path):
    resolved = load_spec(str(make_spec()), cwd=str(tmp_path))
    with open(data_csv, "a", encoding="utf-8") as handle:
        handle.write("1.0,1.0,far,Flash Cab\n")
    anomaly = "split `eval`, feature `trip_miles`: Unexpected string values (Examples contain values missing from ...)"

    line = explain_failure(resolved, RuntimeError(f"the data does not match the schema. Anomalies:\n  {anomaly}"))

    assert line.startswith("column `trip_miles` holds text, but `features.trip_miles.transform: zscore` reads it")
    assert f"{data_csv} line 32 holds 'far'" in line


def test_other_errors_are_left_as_they_are(make_spec, tmp_path):
    resolved = load_spec(str(make_spec()), cwd=str(tmp_path))

    assert explain_failure(resolved, RuntimeError("Duplicate node name in graph")) is None


@pytest.mark.e2e
def test_a_row_appended_while_the_run_reads_the_file_fails_in_one_line(tmp_path, repo_dir):
    # 240 distinct numbers: too many for TFDV to give the text column a domain, so DataGate passes it.
    rows = "\n".join(f"{i * 0.5},{'abc'[i % 3]},{i % 2}" for i in range(240))
    (tmp_path / "data.csv").write_text(f"x,kind,y\n{rows}\n", encoding="utf-8")
    # A hook appends the row after `validate` has read the file, before ExampleGen reads it.
    (tmp_path / "appender.py").write_text(
        textwrap.dedent(
            """
            class Appender:
                def __init__(self, path):
                    self.path = path

                def before_run(self, **kwargs):
                    with open(self.path, "a", encoding="utf-8") as handle:
                        handle.write("oops,a,1\\n")
            """
        ),
        encoding="utf-8",
    )
    spec = {
        "pipeline": {"name": "appended", "root": str(tmp_path / "run")},
        "data": {"path": "data.csv"},
        "features": {"x": {"transform": "zscore"}, "kind": {"transform": "vocabulary"}},
        "label": {"name": "label", "column": "y"},
        "training": {"train_steps": 5},
        "hooks": [{"uses": "appender:Appender", "parameters": {"path": str(tmp_path / "data.csv")}}],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")

    result = subprocess.run(
        [sys.executable, "-m", "pipelines", "run", str(tmp_path / "spec.yaml")],
        cwd=repo_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: Run failed at Transform: column `x` holds text, but `features.x.transform: zscore` reads it as a "
        f"number: {tmp_path / 'data.csv'} line 242 holds 'oops' (did the file change after `validate` checked it?). "
        "Expected a number or an empty cell in every row. Fix that cell (or list its text in `data.na_values`), "
        "then run again."
    ]
    assert "StringToNumberOp" not in result.stderr
    (log,) = [line.split("Full log: ", 1)[1] for line in result.stderr.splitlines() if line.startswith("Full log: ")]
    assert "StringToNumberOp could not correctly convert string: oops" in open(log, encoding="utf-8").read()
