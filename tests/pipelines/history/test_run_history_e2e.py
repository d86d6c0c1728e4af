"""`runs`, `runs show` and `runs diff` on a real ML Metadata from two real runs (train_steps 60, then 40)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from history_runs import STEPS, two_runs
from taxi_fixtures import REPO

from pipelines.history import list_runs, run_lineage
from pipelines.history.records import read_records

pytestmark = pytest.mark.e2e

UPSTREAM = ["ExampleGen", "StatisticsGen", "SchemaGen", "ExampleValidator", "DataGate", "Transform"]


@pytest.fixture(scope="module")
def runs(taxi_sample_csv, tmp_path_factory):
    return two_runs(taxi_sample_csv, tmp_path_factory)


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )


def cli_json(*args: str):
    completed = cli(*args, "--json")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def pushed_versions(runs) -> list[str]:
    return sorted(os.listdir(os.path.join(runs["root"], "serving", runs["model_name"])))


def test_runs_lists_both_runs_newest_first_from_ml_metadata(runs):
    listed = cli_json("runs", runs["spec_file"])
    first, second = runs["run_ids"]
    assert [run["run_id"] for run in listed] == [second, first]
    assert [run["status"] for run in listed] == ["succeeded", "succeeded"]
    newest, oldest = ({c["component_id"]: c["status"] for c in run["components"]} for run in listed)
    assert all(oldest[c] == "executed" for c in [*UPSTREAM, "Trainer", "Evaluator", "Pusher"]), oldest
    assert all(newest[c] == "cached" for c in UPSTREAM), newest
    assert newest["Trainer"] == newest["Evaluator"] == newest["Pusher"] == "executed"
    assert [run["summary"]["metrics"] for run in listed] == [s["metrics"] for s in reversed(runs["summaries"])]
    assert sorted(run["pushed_version"] for run in listed) == pushed_versions(runs)


def test_runs_table_shows_ids_status_blessing_and_pushed_versions(runs):
    completed = cli("runs", runs["root"])  # the root folder works as well as the spec
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0].split()[:3] == ["RUN", "TOOK", "STATUS"]
    assert runs["run_ids"][1] in lines[1] and runs["run_ids"][0] in lines[2]
    for line, version in zip(lines[1:], reversed(pushed_versions(runs))):
        assert "succeeded" in line and line.rstrip().endswith(version)
    metric, value = sorted(runs["summaries"][1]["metrics"].items())[0]
    assert f"{metric}={value}" in lines[1]


@pytest.mark.parametrize("ref, index", [("latest", 1), ("-1", 1), ("-2", 0), ("exact", 0), ("prefix", 1)])
def test_show_finds_a_run_by_id_prefix_latest_or_index(runs, ref, index):
    wanted = runs["run_ids"][index]
    ref = {"exact": wanted, "prefix": wanted[: len(wanted) - 3]}.get(ref, ref)
    shown = cli_json("runs", runs["spec_file"], "show", ref)
    assert shown["run_id"] == wanted
    assert shown["record"]["spec_text"].count(f"train_steps: {STEPS[index]}") == 1


def test_show_prints_components_artifacts_and_the_record(runs):
    completed = cli("runs", runs["spec_file"], "show", "latest")
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert f"Run {runs['run_ids'][1]} of history: succeeded" in out
    assert "Blessed: yes" in out
    assert f"Spec: {runs['spec_file']}" in out
    assert os.path.join(runs["root"], "artifacts", "Trainer", "model") in out
    assert any(line.split()[:2] == ["Transform", "cached"] for line in out.splitlines())


@pytest.mark.parametrize(
    "ref, message",
    [
        ("1999-01-01", "no run `1999-01-01`. Expected a run id"),
        ("-3", "run -3 does not exist: there are 2 run(s)"),
        ("20", "is ambiguous"),
    ],
)
def test_show_bad_run_is_one_line_naming_the_nearest_ids(runs, ref, message):
    completed = cli("runs", runs["spec_file"], "show", ref)
    assert completed.returncode == 2
    assert completed.stdout == ""
    (line,) = completed.stderr.strip().splitlines()
    assert line.startswith("error: ") and message in line
    assert runs["run_ids"][1] in line or "Use -1 to -2" in line


def test_diff_shows_spec_change_metric_deltas_and_what_re_ran(runs):
    diff = cli_json("runs", runs["spec_file"], "diff", "-2", "-1")
    assert (diff["run_a"], diff["run_b"]) == tuple(runs["run_ids"])
    changed = [line for line in diff["spec_diff"] if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == [f"-  train_steps: {STEPS[0]}", f"+  train_steps: {STEPS[1]}"]
    assert diff["data_changes"] == []
    # False unless this framework's source was edited between the two runs (engineers at work on this checkout).
    fingerprints = [read_records(runs["root"])[run_id].code_fingerprint for run_id in runs["run_ids"]]
    assert diff["code_changed"] is (fingerprints[0] != fingerprints[1])
    assert diff["input_fingerprint"][0] == diff["input_fingerprint"][1] is not None
    before, after = (s["metrics"] for s in runs["summaries"])
    for row in diff["metrics"]:
        assert row["delta"] == round(after[row["name"]] - before[row["name"]], 4)
    assert {"Trainer", "Evaluator", "Pusher"} <= set(diff["reran"])
    assert not set(UPSTREAM) & set(diff["reran"])


def test_diff_as_text_has_the_unified_spec_diff(runs):
    completed = cli("runs", runs["spec_file"], "diff", runs["run_ids"][0], "latest")
    assert completed.returncode == 0, completed.stderr
    assert f"+  train_steps: {STEPS[1]}" in completed.stdout
    assert (
        "Re-ran in B: " in completed.stdout
        and "Transform" not in completed.stdout.split("Re-ran in B: ")[1].split("\n")[0]
    )


def test_runs_without_records_list_from_ml_metadata_alone(runs, tmp_path):
    shutil.copy(os.path.join(runs["root"], "metadata.sqlite"), tmp_path / "metadata.sqlite")
    listed = list_runs(str(tmp_path))
    assert [run.run_id for run in listed] == list(reversed(runs["run_ids"]))
    assert all(run.record is None for run in listed)
    assert [run.summary["metrics"] for run in listed] == [s["metrics"] for s in reversed(runs["summaries"])]
    assert [run.summary["blessed"] for run in listed] == [True, True]


def test_lineage_walks_from_the_pushed_model_back_to_the_data(runs):
    newest = list_runs(runs["root"])[0]
    lineage = run_lineage(runs["root"], newest)
    components = [step.component_id for step in lineage.steps]
    assert components[0] == "ExampleGen" and components[-1] == "Pusher"
    assert {"Transform", "Trainer", "Evaluator"} <= set(components)
    assert lineage.input_base == os.path.dirname(runs["data_path"])
    assert lineage.input_patterns == [os.path.basename(runs["data_path"])]
    assert list(lineage.data_files) == [runs["data_path"]]
    assert lineage.pushed_version == newest.pushed_version == pushed_versions(runs)[-1]
    trainer = next(step for step in lineage.steps if step.component_id == "Trainer")
    assert trainer.execution_id == newest.component("Trainer").execution_id  # this run's model, not the baseline
    transform = next(step for step in lineage.steps if step.component_id == "Transform")
    assert transform.execution_id < newest.components[0].execution_id  # produced by the first run, reused
