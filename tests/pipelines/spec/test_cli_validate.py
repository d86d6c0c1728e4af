"""`python -m pipelines validate FILE`: exit 0 or 2, one stderr line per problem, nothing written."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.spec.models import TrainingSpec


def _keys_of(spec_class) -> str:
    return ", ".join(f"`{field.name}`" for field in dataclasses.fields(spec_class))


@pytest.fixture
def validate(repo_dir):
    """Runs the CLI from the repo folder; returns the finished process."""

    def run(spec_file: Path | str) -> subprocess.CompletedProcess:
        env = dict(os.environ, TF_USE_LEGACY_KERAS="1", PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run(
            [sys.executable, "-m", "pipelines", "validate", str(spec_file)],
            cwd=repo_dir,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    return run


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_valid_spec_exits_0_and_creates_nothing(validate, make_spec, tmp_path, repo_dir):
    spec_file = make_spec({"pipeline.name": "cli_validate_probe_ok"})
    before = _tree(tmp_path)

    result = validate(spec_file)

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{spec_file}: valid (3 features, 1 data file(s)).\n"
    assert "error:" not in result.stderr
    assert _tree(tmp_path) == before
    assert not os.path.exists(os.path.join(repo_dir, "runs", "cli_validate_probe_ok"))


def test_bundled_example_is_valid(validate, repo_dir):
    result = validate("pipelines/examples/chicago_taxi.yaml")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "pipelines/examples/chicago_taxi.yaml: valid (15 features, 1 data file(s)).\n"


EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "pipelines" / "examples"
BUNDLED_EXAMPLES = sorted(path.name for path in EXAMPLES_DIR.glob("*.yaml"))


@pytest.mark.parametrize("name", BUNDLED_EXAMPLES)
def test_bundled_examples_validate_without_warnings(validate, tmp_path, name):
    spec_file = os.path.join("pipelines", "examples", name)
    if name == "digits.yaml":  # its images are written by a script, not shipped: write them beside a copy
        script = EXAMPLES_DIR / "data" / "write_digits_images.py"
        subprocess.run(
            [sys.executable, str(script), str(tmp_path / "data" / "digits")], check=True, capture_output=True
        )
        spec_file = str(tmp_path / name)
        Path(spec_file).write_text((EXAMPLES_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    if name == "taxi_spans.yaml":  # its spans are written by a script, not shipped: write them beside a copy
        script = EXAMPLES_DIR / "data" / "write_taxi_spans.py"
        out = tmp_path / "data" / "taxi_spans"
        subprocess.run([sys.executable, str(script), "--out", str(out)], check=True, capture_output=True)
        spec_file = str(tmp_path / name)
        Path(spec_file).write_text((EXAMPLES_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")

    result = validate(spec_file)

    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == []


def test_invalid_spec_exits_2_with_one_error_line_per_problem(validate, make_spec, tmp_path, repo_dir, line_with):
    spec_file = make_spec(
        {
            "pipeline.name": "cli_validate_probe_bad",
            "data.splits": {"train": 2},
            "features.fares": {"transform": "zscore"},
            "evaluation.metrics": ["binary_accuracy", "acu"],
        }
    )
    before = _tree(tmp_path)

    result = validate(spec_file)

    assert result.returncode == 2
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {spec_file}:{line_with(spec_file, 'splits:')}: data.splits: a `eval` split is required. "
        "Received splits: ['train']. Add `eval: <weight>`.",
        f"error: {spec_file}:{line_with(spec_file, '  fares:')}: features.fares: column `fares` is not in the data "
        f"({tmp_path / 'taxi.csv'}). Did you mean `fare`? Columns: fare, tips, trip_miles, company.",
        f"error: {spec_file}:{line_with(spec_file, 'metrics: [')}: evaluation.metrics[1]: unknown metric `acu` for a "
        "classification label. Did you mean `auc`? Expected one of: binary_accuracy, auc, precision, recall, "
        "binary_crossentropy, example_count, accuracy, macro_auc, weighted_auc, top_k_accuracy, "
        "sparse_categorical_crossentropy, confusion_matrix.",
    ]
    assert result.stderr.splitlines()[-1] == "3 problem(s) in the spec; nothing was run or written."
    assert _tree(tmp_path) == before
    assert not os.path.exists(os.path.join(repo_dir, "runs", "cli_validate_probe_bad"))


def test_schema_error_exits_2(validate, make_spec, line_with):
    spec_file = make_spec({"training.bach_size": 16})

    result = validate(spec_file)

    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        f"error: {spec_file}:{line_with(spec_file, 'bach_size')}: training.bach_size: unknown key `bach_size`. "
        f"Did you mean `batch_size`? Expected one of: {_keys_of(TrainingSpec)}. Remove or rename it."
    )
    assert "Traceback" not in result.stderr


def test_missing_spec_file_exits_2(validate, tmp_path):
    missing = tmp_path / "nope.yaml"

    result = validate(missing)

    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        f"error: {missing}: <root>: spec file does not exist. Expected a YAML file. Received: {missing}."
    )
    assert list(tmp_path.iterdir()) == []
