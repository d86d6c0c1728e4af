"""`validate` catches what a run would fail on: one table of bad specs through the real CLI.

Each row provokes one problem and asserts the exit code (2), the one `error:`
line naming the file, line and YAML path, the fix in it, no traceback, and that
nothing was written (no pipeline root, no serving folder, no pushed model).
"""

from __future__ import annotations

import dataclasses
import math
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pipelines.cli import main


@dataclasses.dataclass
class Bad:
    """One bad spec: `overrides` of the minimal spec, or raw `text`/`raw` bytes for the whole file."""

    yaml_path: str
    fragments: list[str]
    overrides: dict = dataclasses.field(default_factory=dict)
    needle: str | None = None  # text on the line the error must name; None: no line, or `line`
    line: int | None = None
    raw: bytes | None = None
    prepare: Callable[[Path], None] | None = None


def _file(name: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_text("not a folder\n", encoding="utf-8")


def _read_only(name: str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        (folder / name).mkdir()
        (folder / name).chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)

    return make


def _nested(depth: int) -> bytes:
    return ("pipeline: " + "{a: " * depth + "1" + "}" * depth + "\n").encode()


_BOMB = "\n".join(
    [
        'l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]',
        *(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)),
        "pipeline: {name: bomb}",
    ]
).encode()
_LONG_EXPRESSION = " + ".join(["fare"] * 3000) + " > 1"

TRAINING_LINE = "training:"
THRESHOLD_LINE = "binary_accuracy: {"

CASES: dict[str, Bad] = {
    # Numbers: finite, whole where whole numbers are expected, in sane ranges.
    "nan-learning-rate": Bad(
        "training",
        ["`learning_rate` must be a finite number", "Received: learning_rate=nan", "Write a plain number"],
        {"training.learning_rate": math.nan},
        TRAINING_LINE,
    ),
    "inf-learning-rate": Bad(
        "training",
        ["`learning_rate` must be a finite number", "learning_rate=inf"],
        {"training.learning_rate": math.inf},
        TRAINING_LINE,
    ),
    "minus-inf-learning-rate": Bad(
        "training",
        ["`learning_rate` must be a finite number", "learning_rate=-inf"],
        {"training.learning_rate": -math.inf},
        TRAINING_LINE,
    ),
    "zero-learning-rate": Bad(
        "training",
        ["`learning_rate` must be above 0. Received: learning_rate=0.0."],
        {"training.learning_rate": 0},
        TRAINING_LINE,
    ),
    "huge-learning-rate": Bad(
        "training",
        ["`learning_rate` must be at most 10. Received: learning_rate=100.0.", "Typical values"],
        {"training.learning_rate": 100},
        TRAINING_LINE,
    ),
    "text-learning-rate": Bad(
        "training.learning_rate",
        ["expected a number. Received: `fast` (str)."],
        {"training.learning_rate": "fast"},
        TRAINING_LINE,
    ),
    "exponent-train-steps": Bad(
        "training.train_steps",
        ["expected a whole number. Received: `1e20` (str).", "digits only"],
        {"training.train_steps": "1e20"},
        TRAINING_LINE,
    ),
    "float-train-steps": Bad(
        "training.train_steps",
        ["expected a whole number. Received: `1e+20` (float).", "no exponent"],
        {"training.train_steps": 1e20},
        TRAINING_LINE,
    ),
    "whole-float-batch": Bad(
        "training.batch_size",
        ["expected a whole number. Received: `8.0` (float).", "Write it as a whole number: `8`."],
        {"training.batch_size": 8.0},
        TRAINING_LINE,
    ),
    "fraction-batch": Bad(
        "training.batch_size",
        ["expected a whole number. Received: `2.5` (float).", "digits only"],
        {"training.batch_size": 2.5},
        TRAINING_LINE,
    ),
    "huge-train-steps": Bad(
        "training",
        [
            "`train_steps` is too large: expected at most 1,000,000,000",
            "Received: train_steps=100,000,000,000",
            "Use a smaller `training.train_steps`.",
        ],
        {"training.train_steps": 10**11},
        TRAINING_LINE,
    ),
    "huge-eval-steps": Bad(
        "training",
        ["`eval_steps` is too large", "Use a smaller `training.eval_steps`."],
        {"training.eval_steps": 10**10},
        TRAINING_LINE,
    ),
    "huge-batch": Bad(
        "training",
        ["`batch_size` is too large: expected at most 1,048,576", "batch_size=1,000,000,000,000"],
        {"training.batch_size": 10**12},
        TRAINING_LINE,
    ),
    "huge-steps-per-execution": Bad(
        "training",
        ["`steps_per_execution` is too large", "Use a smaller"],
        {"training.steps_per_execution": 10**7},
        TRAINING_LINE,
    ),
    "huge-accumulation": Bad(
        "training",
        ["`gradient_accumulation_steps` is too large", "Use a smaller"],
        {"training.gradient_accumulation_steps": 10**6},
        TRAINING_LINE,
    ),
    "huge-cache-budget": Bad(
        "training",
        ["`cache_budget_mb` is too large: expected at most 1,048,576 (1 TiB)"],
        {"training.cache_budget_mb": 10**9},
        TRAINING_LINE,
    ),
    "huge-checkpoint-interval": Bad(
        "training",
        ["`checkpoint_every_steps` is too large"],
        {"training.checkpoint_every_steps": 10**10},
        TRAINING_LINE,
    ),
    "zero-eval-steps": Bad(
        "training",
        ["`eval_steps` must be at least 1. Received: eval_steps=0."],
        {"training.eval_steps": 0},
        TRAINING_LINE,
    ),
    # Thresholds: consistent and finite.
    "min-above-max": Bad(
        "evaluation.thresholds.binary_accuracy",
        ["`min` is above `max`: no value can pass", "Received: min=5.0, max=0.1", "Swap them"],
        {"evaluation.thresholds": {"binary_accuracy": {"min": 5, "max": 0.1}}},
        THRESHOLD_LINE,
    ),
    "nan-min": Bad(
        "evaluation.thresholds.binary_accuracy",
        ["`min` must be a finite number. Received: min=nan."],
        {"evaluation.thresholds": {"binary_accuracy": {"min": math.nan}}},
        THRESHOLD_LINE,
    ),
    "inf-max-regression": Bad(
        "evaluation.thresholds.binary_accuracy",
        ["`max_regression` must be a finite number"],
        {"evaluation.thresholds": {"binary_accuracy": {"max_regression": math.inf}}},
        THRESHOLD_LINE,
    ),
    "negative-max-regression": Bad(
        "evaluation.thresholds.binary_accuracy",
        ["`max_regression` must be 0 or more"],
        {"evaluation.thresholds": {"binary_accuracy": {"max_regression": -1}}},
        THRESHOLD_LINE,
    ),
    "empty-threshold": Bad(
        "evaluation.thresholds.binary_accuracy",
        ["a threshold needs at least one of `min`, `max` or `max_regression`."],
        {"evaluation.thresholds": {"binary_accuracy": {"higher_is_better": True}}},
        THRESHOLD_LINE,
    ),
    "nan-p99-budget": Bad(
        "deploy",
        ["`p99_budget_ms` must be a finite number"],
        {"deploy": {"enabled": True, "p99_budget_ms": math.nan}},
        "deploy:",
    ),
    "zero-sample-rows": Bad(
        "deploy", ["`sample_rows` must be at least 1"], {"deploy": {"enabled": True, "sample_rows": 0}}, "deploy:"
    ),
    "zero-max-request-mb": Bad(
        "deploy",
        ["`max_request_mb` must be above 0", "Received: max_request_mb=0", "Example: `max_request_mb: 16`"],
        {"deploy": {"enabled": True, "max_request_mb": 0}},
        "deploy:",
    ),
    "zero-stats-sample-rate": Bad(
        "data.checks",
        [
            "`sample_rate` must be a fraction above 0 and at most 1",
            "Received: sample_rate=0",
            "Example: `sample_rate: 0.1`",
        ],
        {"data.checks": {"sample_rate": 0}},
        "checks:",
    ),
    "tiny-eval-sample": Bad(
        "evaluation.sample_rows",
        ["`sample_rows` must be at least 100", "Received: sample_rows=50", "or null to score every eval row"],
        {"evaluation.sample_rows": 50},
        "sample_rows: 50",
    ),
    # Where the run writes: writable folders, or paths under one.
    "root-is-a-file": Bad(
        "pipeline.root",
        ["`pipeline.root` cannot be create", "root_file is a file", "Point `pipeline.root` somewhere else"],
        {"pipeline.root": "root_file"},
        "pipeline:",
        prepare=_file("root_file"),
    ),
    "root-under-a-file": Bad(
        "pipeline.root",
        ["blocker is a file", "(inside ", "Point `pipeline.root` somewhere else"],
        {"pipeline.root": "blocker/runs/taxi"},
        "pipeline:",
        prepare=_file("blocker"),
    ),
    "root-read-only": Bad(
        "pipeline.root",
        ["`pipeline.root` is not writable", "ro_root is read-only", "chmod u+w"],
        {"pipeline.root": "ro_root"},
        "pipeline:",
        prepare=_read_only("ro_root"),
    ),
    "root-under-read-only": Bad(
        "pipeline.root",
        ["`pipeline.root` is not writable", "(the nearest existing folder of", "chmod u+w"],
        {"pipeline.root": "ro_parent/runs/taxi"},
        "pipeline:",
        prepare=_read_only("ro_parent"),
    ),
    "serving-dir-is-a-file": Bad(
        "push.serving_dir",
        ["`push.serving_dir` cannot be created", "serving_file is a file", "Point `push.serving_dir` somewhere else"],
        {"push": {"serving_dir": "serving_file"}},
        "push:",
        prepare=_file("serving_file"),
    ),
    "serving-dir-under-a-file": Bad(
        "push.serving_dir",
        ["`push.serving_dir` cannot be created", "blocker is a file"],
        {"push": {"serving_dir": "blocker/models"}},
        "push:",
        prepare=_file("blocker"),
    ),
    "serving-dir-read-only": Bad(
        "push.serving_dir",
        ["`push.serving_dir` is not writable", "ro_serving is read-only"],
        {"push": {"serving_dir": "ro_serving"}},
        "push:",
        prepare=_read_only("ro_serving"),
    ),
    # The label against the task, and the size of a label expression.
    "text-label-for-regression": Bad(
        "label.column",
        [
            "column `company` holds text, but `task: regression` needs a numeric label",
            "Received: `Flash Cab` at ",
            "Use `task: classification`",
        ],
        {
            "label": {"name": "target", "column": "company", "task": "regression"},
            "evaluation": {"metrics": ["mean_squared_error"]},
            "model.type": "dnn",
            "features": {"fare": {"transform": "zscore"}},
        },
        "label:",
    ),
    "3000-term-expression": Bad(
        "label.expression",
        [
            "the expression is too long: expected at most 1000 characters and 100 terms",
            "3001 terms",
            "use `label.column`",
        ],
        {"label.expression": _LONG_EXPRESSION},
        "label:",
    ),
    "long-expression": Bad(
        "label.expression",
        ["the expression is too long", "Compute the label in a column"],
        {"label.expression": "tips > 0.2 * fare" + " " * 1000 + "+ 0"},
        "label:",
    ),
    # Files that are not YAML text, or would take long or a lot of memory to read.
    "binary-file": Bad(
        "<root>",
        ["this is a binary file (a NUL byte at byte offset 7)", "Pass the pipeline's .yaml file."],
        raw=b"\x89PNG\r\n\x1a\x00\x00\x00\rIHDR",
        line=2,
    ),
    "latin-1-file": Bad(
        "<root>",
        ["the file is not UTF-8 text: byte b'\\xe9' at byte offset 33", "Save the file as UTF-8."],
        raw=b"pipeline: {name: taxi}\nlabel: caf\xe9\n",
        line=2,
    ),
    "control-character": Bad(
        "<root>",
        ["character #x0007 at offset 29 is not allowed in YAML", "Remove the character"],
        raw=b"pipeline: {name: taxi}\nbell: \x07\n",
        line=2,
    ),
    "nested-40-deep": Bad(
        "<root>", ["the YAML nests deeper than 32 levels", "Flatten the structure"], raw=_nested(40), line=1
    ),
    "nested-100000-deep": Bad("<root>", ["the YAML nests deeper than 32 levels"], raw=_nested(100_000), line=1),
    "alias-bomb": Bad(
        "<root>", ["the spec expands to more than 100,000 values", "Remove the repeated aliases"], raw=_BOMB, line=1
    ),
    "two-megabyte-list": Bad(
        "<root>",
        ["the spec file is 2,", "Expected at most 1,048,576 bytes", "Move the data to a CSV"],
        raw=b"rows: [" + b"1, " * 700_000 + b"1]\n",
    ),
    "not-yaml": Bad(
        "<root>",
        ["this is not valid YAML", "Fix the syntax at this line."],
        raw=b"pipeline: {name: taxi\nlabel: x\n",
        line=2,
    ),
    "huge-split-weight": Bad(
        "data.splits.train",
        [
            "split weights are relative shares: expected at most 1000. Received: train=1000000000000.",
            "{train: 2, eval: 1}",
        ],
        {"data.splits": {"train": 10**12, "eval": 1}},
        "splits:",
    ),
    "split-without-rows": Bad(
        "data.splits.eval",
        [
            "the `eval` split would get no rows: weight 1 of 41 gives it about 0.73 of the data's 30 row(s).",
            "Raise `eval`'s weight to at least 2 (the other splits weigh 40), or add rows.",
        ],
        {"data.splits": {"train": 40, "eval": 1}},
        "splits:",
    ),
    "huge-layer": Bad(
        "model.hidden_units",
        ["a layer of 1,000,000,000 units is too wide: expected at most 65,536 per layer", "Use narrower layers."],
        {"model": {"hidden_units": [10**9, 8]}},
        "hidden_units:",
    ),
    "zero-embedding": Bad(
        "model.embedding_dim",
        ["expected an embedding size from 1 to 4,096. Received: 0.", "Typical sizes"],
        {"model": {"embedding_dim": 0}},
        "model:",
    ),
    # A few of the checks that were there before, through the same door.
    "unknown-training-key": Bad(
        "training.bach_size",
        ["unknown key `bach_size`.", "Did you mean `batch_size`?"],
        {"training.bach_size": 8},
        TRAINING_LINE,
    ),
    "bad-pipeline-name": Bad("pipeline.name", ["is not a usable name"], {"pipeline.name": "9 lives"}, "pipeline:"),
}


def _tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.lstat().st_mode for p in folder.rglob("*")}


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    """Runs `python -m pipelines ARGS` in this process, from tmp_path; returns (exit code, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_the_table_has_at_least_40_bad_specs():
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_bad_spec_exits_2_naming_file_line_path_and_fix_and_writes_nothing(case, tmp_path, make_spec, line_with, cli):
    if case.prepare is not None:
        case.prepare(tmp_path)
    if case.raw is not None:
        spec_file = tmp_path / "spec.yaml"
        spec_file.write_bytes(case.raw)
    else:
        spec_file = make_spec(case.overrides)
    line = line_with(spec_file, case.needle) if case.needle else case.line
    before = _tree(tmp_path)
    try:
        code, out, err = cli("validate", str(spec_file))
        after = _tree(tmp_path)
    finally:
        for path in tmp_path.iterdir():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)

    assert code == 2, err
    assert out == ""
    assert "Traceback" not in err
    errors = [text for text in err.splitlines() if text.startswith("error: ")]
    assert len(errors) == 1, err
    where = f"{spec_file}:{line}" if line is not None else f"{spec_file}"
    assert errors[0].startswith(f"error: {where}: {case.yaml_path}: "), errors[0]
    for fragment in case.fragments:
        assert fragment in errors[0]
    assert err.splitlines()[-1] == "1 problem(s) in the spec; nothing was run or written."
    assert after == before  # no root, no logs, no serving folder, no pushed model
    assert not os.path.exists(tmp_path / "runs")


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"label": {"name": "target", "column": "tips", "task": "regression"}}, id="numeric-regression"),
        pytest.param({"label": {"name": "target", "column": "company"}}, id="text-classes"),
        pytest.param({"pipeline.root": "not/there/yet", "push": {"serving_dir": "models/here"}}, id="new-folders"),
        pytest.param({"evaluation.thresholds": {"binary_accuracy": {"min": 0.5, "max": 0.5}}}, id="min-equals-max"),
        pytest.param(
            {"training": {"batch_size": 1_048_576, "train_steps": 1_000_000_000, "learning_rate": 10}}, id="at-bounds"
        ),
    ],
)
def test_edge_of_the_rules_is_valid_and_writes_nothing(overrides, tmp_path, make_spec, cli):
    if "label" in overrides:
        overrides = dict(overrides, **{"evaluation.thresholds": {}, "features": {"fare": {"transform": "zscore"}}})
        overrides["model.type"] = "dnn"
        if overrides["label"].get("task") == "regression":
            overrides["evaluation.metrics"] = ["mean_squared_error"]
        else:
            overrides["evaluation.metrics"] = ["accuracy"]
    spec_file = make_spec(overrides)
    before = _tree(tmp_path)

    code, out, err = cli("validate", str(spec_file))

    assert code == 0, err
    assert out.startswith(f"{spec_file}: valid")
    assert _tree(tmp_path) == before
