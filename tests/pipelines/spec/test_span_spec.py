"""`data.path` with spans: validate checks the newest span, names the spans it sees, and refuses what TFX would."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipelines.load import load_spec


@pytest.fixture
def span_folders(write_csv):
    """span-1, span-2 and span-4 (span 3 missing); span-4 has one more company than the others."""
    write_csv("data/span-1/part.csv")
    text = write_csv("data/span-2/part.csv").read_text(encoding="utf-8")
    return write_csv("data/span-4/part.csv", text=text.replace("Blue Ribbon", "Newcomer Cab", 1))


def test_a_span_path_is_checked_on_its_newest_span(make_spec, span_folders, tmp_path):
    resolved = load_spec(str(make_spec({"data.path": "data/span-{SPAN}/*.csv"})), cwd=str(tmp_path))

    assert [span.number for span in resolved.spans] == [1, 2, 4]
    assert resolved.data_files == (str(span_folders),)
    assert resolved.data_format == "csv"


def test_validate_names_the_spans_their_newest_and_the_gaps(make_spec, span_folders, repo_dir):
    spec_file = make_spec({"data.path": "data/span-{SPAN}/*.csv"})
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-m", "pipelines", "validate", str(spec_file)],
        cwd=repo_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert "Spans: 3 span(s), newest span 4, oldest span 1; 1 missing: 3." in done.stdout


def test_a_pattern_matching_nothing_names_the_key_and_the_fix(make_spec, spec_problems, tmp_path):
    (tmp_path / "data").mkdir()

    problems = spec_problems(make_spec({"data.path": "data/span-{SPAN}/*.csv"}))

    assert [p.path for p in problems] == ["data.path"]
    assert "no file matches" in problems[0].message and "data/span-{SPAN}/*.csv" in problems[0].message
    assert "Expected at least one span" in problems[0].message


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("data/v{VERSION}/*.csv", "TFX cannot match spans with this pattern"),
        ("data/span-{SPAN:2}/*.csv", "Glob pattern does not match regex pattern"),
    ],
    ids=["version-without-span", "width-mismatch"],
)
def test_a_pattern_tfx_refuses_is_a_data_path_problem(make_spec, spec_problems, span_folders, pattern, expected):
    (span_folders.parent.parent / "v1").mkdir()

    problems = spec_problems(make_spec({"data.path": pattern}))

    assert [p.path for p in problems] == ["data.path"]
    assert expected in problems[0].message


def test_image_folders_cannot_be_spans(make_spec, spec_problems, span_folders):
    problems = spec_problems(make_spec({"data.path": "data/span-{SPAN}", "data.format": "image_folder"}))

    assert "Point `data.path` at one image folder" in problems[0].message


def test_a_window_without_spans_names_the_key_and_the_fix(make_spec, spec_problems):
    problems = spec_problems(make_spec({"data.window": 3}))

    assert [p.path for p in problems] == ["data.window"]
    assert "`window: 3` reads the newest 3 spans, and `data.path` names no spans" in problems[0].message


def test_a_window_below_one_is_refused(make_spec, spec_problems, span_folders):
    problems = spec_problems(make_spec({"data.path": "data/span-{SPAN}/*.csv", "data.window": 0}))

    assert "Expected a whole number >= 1. Received: window=0" in problems[0].message


def test_a_window_over_spans_reads_the_newest_spans(make_spec, span_folders, tmp_path):
    from pipelines import compiler

    resolved = load_spec(str(make_spec({"data.path": "data/span-{SPAN}/*.csv", "data.window": 2})), cwd=str(tmp_path))
    pipeline = compiler.compile_pipeline(resolved)
    transform = next(c for c in pipeline.components if c.id == "Transform")

    assert resolved.spec.data.window == 2
    assert "ExampleGen" in {node.id for node in transform.upstream_nodes}
    assert type(transform.inputs["examples"]).__name__ == "ResolvedChannel"
