"""Picking a run (`select_run`), comparing records (`diff_runs`) and the `runs` command's errors, without a pipeline."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from taxi_fixtures import REPO

from pipelines.history.diff import diff_runs
from pipelines.history.mlmd_runs import ComponentRun, RunInfo
from pipelines.history.records import RunRecord, read_records, record_path, write_record
from pipelines.history.select import RunNotFound, select_run

IDS = ["2026-11-23T10:00:03.000001", "2026-11-23T09:00:02.000001", "2026-11-22T09:00:01.000001"]


@pytest.mark.parametrize(
    "wanted, expected",
    [
        ("latest", IDS[0]),
        ("-1", IDS[0]),
        ("-3", IDS[2]),
        (IDS[1], IDS[1]),
        ("2026-11-22", IDS[2]),
        ("2026-11-23T09", IDS[1]),
    ],
)
def test_select_run_finds_by_id_prefix_latest_and_index(wanted, expected):
    assert select_run(IDS, wanted) == expected


@pytest.mark.parametrize(
    "wanted, message",
    [
        ("2026-11-23T", "run prefix `2026-11-23T` is ambiguous"),
        ("-4", "run -4 does not exist: there are 3 run(s). Expected a run id"),
        ("-0", "run -0 does not exist"),
        ("2025-01-01", "no run `2025-01-01`. Expected a run id, a unique prefix of one, `latest` or -N"),
        ("latests", "Nearest run ids: "),
    ],
)
def test_select_run_bad_input_names_what_to_give(wanted, message):
    with pytest.raises(RunNotFound) as raised:
        select_run(IDS, wanted)
    assert message in str(raised.value)
    assert f"Received: {wanted}" in str(raised.value)


def test_select_run_with_no_runs_says_run_first():
    with pytest.raises(RunNotFound, match="no runs in ML Metadata yet.*Run the pipeline first"):
        select_run([], "latest")


def run_with(run_id: str, spec_text: str, files: dict, metrics: dict, statuses: dict, code: str = "c") -> RunInfo:
    record = RunRecord(run_id, "p", "/s.yaml", spec_text, files, code, "f", 1.0, None, {"metrics": metrics})
    components = [ComponentRun(c, s, i, 0.0, 0.0) for i, (c, s) in enumerate(statuses.items())]
    return RunInfo(run_id, "p", run_id, 1.0, "succeeded", components, record.summary, None, "fp", record)


def test_diff_runs_names_data_files_added_removed_and_changed():
    a = run_with(
        "a", "x: 1\n", {"/d/1.csv": {"size": 1, "mtime_ns": 1}, "/d/2.csv": {"size": 2, "mtime_ns": 2}}, {}, {}
    )
    b = run_with(
        "b", "x: 1\n", {"/d/1.csv": {"size": 5, "mtime_ns": 9}, "/d/3.csv": {"size": 3, "mtime_ns": 3}}, {}, {}
    )
    changes = {c["path"]: c["change"] for c in diff_runs(a, b).data_changes}
    assert changes == {"/d/1.csv": "changed", "/d/2.csv": "removed", "/d/3.csv": "added"}
    assert diff_runs(a, b).spec_diff == []


def test_diff_runs_metric_deltas_code_and_components():
    a = run_with("a", "x: 1\n", {}, {"auc": 0.5, "gone": 1.0}, {"Trainer": "executed", "Transform": "executed"})
    b = run_with("b", "x: 2\n", {}, {"auc": 0.75, "new": 2.0}, {"Trainer": "executed", "Transform": "cached"}, "d")
    diff = diff_runs(a, b)
    assert diff.metrics == [
        {"name": "auc", "a": 0.5, "b": 0.75, "delta": 0.25},
        {"name": "gone", "a": 1.0, "b": None, "delta": None},
        {"name": "new", "a": None, "b": 2.0, "delta": None},
    ]
    assert diff.code_changed is True
    assert diff.reran == ["Trainer"]
    assert "-x: 1" in diff.spec_diff and "+x: 2" in diff.spec_diff


def test_diff_runs_without_a_record_says_what_cannot_be_compared():
    a = run_with("a", "", {}, {}, {})
    a.record = None
    diff = diff_runs(a, run_with("b", "", {}, {}, {}))
    assert diff.spec_diff is None and diff.code_changed is None
    assert "no run record for a" in diff.notes[0]


def test_run_record_round_trips_under_a_safe_file_name(tmp_path):
    record = RunRecord("2026-11-23T10:00:03.5", "p", "/s.yaml", "a: 1\n", {}, "c", "f", 2.5, "/log", {"blessed": True})
    path = write_record(str(tmp_path), record)
    assert path == record_path(str(tmp_path), record.run_id) == str(tmp_path / "runs" / "2026-11-23T10-00-03.5.json")
    (tmp_path / "runs" / "broken.json").write_text("{not json", encoding="utf-8")
    assert read_records(str(tmp_path)) == {record.run_id: record}


@pytest.mark.parametrize("where, message", [("missing", "does not exist"), ("empty", "no ML Metadata under")])
def test_runs_on_a_folder_without_ml_metadata_says_what_to_do(tmp_path, where, message):
    path = tmp_path / "nothing-here" if where == "missing" else tmp_path
    completed = subprocess.run(
        [sys.executable, "-m", "pipelines", "runs", str(path)], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert completed.returncode == 2
    (line,) = completed.stderr.strip().splitlines()
    assert line.startswith("error: ") and message in line and str(path) in line
    assert not os.listdir(tmp_path)  # nothing created
