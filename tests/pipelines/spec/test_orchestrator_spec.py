"""The `orchestrator:` section: schedules, per-component settings, and their error messages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipelines.load import load_spec
from pipelines.spec.cron import cluster_cron_problem, cron_problem, five_field, kubeflow_cron, vertex_cron


@pytest.mark.parametrize(
    "cron",
    [
        "0 3 * * *",
        "*/15 * * * *",
        "30 2 * * 1-5",
        "0 0 1,15 * *",
        "0 9 * jan-mar mon",
        "5 4 * * sun",
        "@daily",
        "@hourly",
    ],
)
def test_valid_cron_expressions_pass(cron):
    assert cron_problem(cron) is None


@pytest.mark.parametrize(
    "cron, expected",
    [
        ("0 25 * * *", "the hour field `25` is not valid: expected `*`, a number or name in 0-23"),
        ("60 * * * *", "the minute field `60` is not valid: expected `*`, a number or name in 0-59"),
        ("0 3 * *", "a cron expression has 5 fields"),
        ("0 3 * * * *", "this one has 6"),
        ("0 3 0 * *", "the day of month field `0` is not valid: expected `*`, a number or name in 1-31"),
        ("0 3 * 13 *", "the month field `13` is not valid"),
        ("0 3 * * 8", "the day of week field `8` is not valid: expected `*`, a number or name in 0-7"),
        ("*/0 * * * *", "the minute field `*/0` is not valid"),
        ("0 3 * * moonday", "the day of week field `moonday` is not valid"),
        ("@fortnightly", "is not a known macro"),
    ],
)
def test_invalid_cron_expressions_say_why(cron, expected):
    assert expected in cron_problem(cron)


@pytest.mark.parametrize(
    "cron",
    ["0 3 * * *", "*/15 1-5 * * mon-fri", "0 0 1 jan *", "0 25 * * *", "61 * * * *", "0 0 L * *", "0 3 * * 7"],
)
def test_checker_agrees_with_croniter(cron):
    croniter = pytest.importorskip("croniter")
    assert (cron_problem(cron) is None) == croniter.croniter.is_valid(cron)


@pytest.mark.parametrize(
    "cron, kubeflow, vertex",
    [
        ("0 3 * * *", "0 0 3 * * *", "0 3 * * *"),
        ("30 2 * * 1-5", "0 30 2 * * 1,2,3,4,5", "30 2 * * 1,2,3,4,5"),
        ("0 4 * * 7", "0 0 4 * * 0", "0 4 * * 0"),
        ("0 4 * * 5-7", "0 0 4 * * 0,5,6", "0 4 * * 0,5,6"),
        ("*/20 * * * sun", "0 0,20,40 * * * 0", "0,20,40 * * * 0"),
        ("@weekly", "0 0 0 * * 0", "0 0 * * 0"),
        ("0 3 * jul wed", "0 0 3 * 7 3", "0 3 * 7 3"),  # names hold the letters of `L` and `W`
    ],
)
def test_schedules_are_written_in_each_cluster_schedulers_dialect(cron, kubeflow, vertex):
    assert kubeflow_cron(cron) == kubeflow
    assert vertex_cron(cron) == vertex


@pytest.mark.parametrize(
    "cron, feature",
    [("0 0 L * *", "`L`"), ("0 0 * * mon#2", "`#`"), ("0 0 15W * *", "`W`"), ("0 0 * * L5", "`L`")],
)
def test_features_only_croniter_knows_are_refused_for_cluster_schedulers(cron, feature):
    assert cron_problem(cron) is None  # Airflow takes them
    assert feature in cluster_cron_problem(cron)
    with pytest.raises(ValueError, match="do not accept"):
        kubeflow_cron(cron)


def test_macros_are_spelled_out_for_engines_that_want_five_fields():
    assert five_field("@daily") == "0 0 * * *"
    assert five_field("0 3 * * *") == "0 3 * * *"


def test_an_invalid_schedule_is_reported_with_path_and_line(make_spec, spec_problems, line_with):
    path = make_spec({"orchestrator": {"target": "airflow", "schedule": "0 25 * * *"}})
    (problem,) = spec_problems(path)
    assert problem.path == "orchestrator.schedule"
    assert problem.line == line_with(path, "schedule:")
    assert problem.message.startswith("invalid cron expression: the hour field `25` is not valid: expected `*`, ")
    assert "Received: '0 25 * * *'" in problem.message


def test_an_unknown_component_gets_a_did_you_mean(make_spec, spec_problems):
    path = make_spec({"orchestrator": {"components": {"Trainr": {"gpus": 1}}}})
    (problem,) = spec_problems(path)
    assert problem.path == "orchestrator.components.Trainr"
    assert "unknown component `Trainr`. Did you mean `Trainer`?" in problem.message


def test_workers_belong_to_the_trainer(make_spec, spec_problems):
    path = make_spec({"orchestrator": {"components": {"Evaluator": {"workers": 2}}}})
    (problem,) = spec_problems(path)
    assert problem.path == "orchestrator.components.Evaluator.workers"
    assert "only the Trainer runs on several workers" in problem.message


@pytest.mark.parametrize(
    "settings, expected",
    [
        ({"memory": "lots"}, "`memory` must be a Kubernetes quantity."),
        ({"accelerator": "NVIDIA_TESLA_T4"}, "`accelerator` needs `gpus`."),
        ({"retries": -1}, "`retries` must be 0 or more."),
        ({"timeout_seconds": 0}, "`timeout_seconds` must be at least 1."),
        ({"cpu": 0}, "`cpu` must be above 0 cores."),
        ({"gpu": 1}, "unknown key `gpu`. Did you mean `gpus`?"),
    ],
)
def test_bad_component_settings(make_spec, spec_problems, settings, expected):
    path = make_spec({"orchestrator": {"components": {"Trainer": settings}}})
    (problem,) = spec_problems(path)
    assert expected in problem.message


@pytest.mark.parametrize("root", [None, "runs/taxi", "/tmp/taxi"])
def test_kubeflow_needs_an_object_store_root(make_spec, spec_problems, root):
    (problem,) = spec_problems(make_spec({"pipeline.root": root, "orchestrator": {"target": "kubeflow"}}))
    assert problem.path == "pipeline.root"
    assert "needs an object-store pipeline root" in problem.message
    assert "Example: `root: gs://my-bucket/pipelines/chicago_taxi`" in problem.message


def test_an_object_store_root_is_for_kubeflow_only(make_spec, spec_problems):
    (problem,) = spec_problems(make_spec({"pipeline.root": "gs://bucket/taxi"}))
    assert problem.path == "pipeline.root"
    assert "the local target keeps ML Metadata (a SQLite file) and logs under the root" in problem.message


def test_a_kubeflow_spec_with_an_object_store_root_validates(make_spec, tmp_path):
    path = make_spec({"pipeline.root": "s3://bucket/taxi", "orchestrator": {"target": "kubeflow"}})
    resolved = load_spec(str(path), cwd=str(tmp_path))
    assert resolved.root == "s3://bucket/taxi"


def test_cluster_schedulers_refuse_croniter_only_features(make_spec, spec_problems):
    path = make_spec({"pipeline.root": "gs://b/r", "orchestrator": {"target": "kubeflow", "schedule": "0 3 L * *"}})
    (problem,) = spec_problems(path)
    assert problem.path == "orchestrator.schedule"
    assert "uses `L`, which Kubeflow Pipelines' and Vertex AI's schedulers do not accept" in problem.message


def test_gke_needs_a_gpu_name_it_labels_nodes_with(make_spec, spec_problems):
    settings = {"Trainer": {"gpus": 1, "accelerator": "Tesla-T4"}}
    (problem,) = spec_problems(make_spec({"orchestrator": {"platform": "gke", "components": settings}}))
    assert problem.path == "orchestrator.components.Trainer.accelerator"
    assert "unknown GPU for GKE." in problem.message and "NVIDIA_TESLA_T4" in problem.message
    assert "Received: accelerator='Tesla-T4'" in problem.message


def test_an_unknown_target_is_an_error(make_spec, spec_problems):
    (problem,) = spec_problems(make_spec({"orchestrator": {"target": "kubeflw"}}))
    assert problem.path == "orchestrator.target"
    assert "Did you mean `kubeflow`?" in problem.message


def test_cli_validate_exits_2_on_a_bad_schedule_and_writes_nothing(make_spec, repo_dir, tmp_path):
    path = make_spec({"orchestrator": {"schedule": "every day"}})
    before = sorted(os.listdir(tmp_path))
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1")
    result = subprocess.run(
        [sys.executable, "-m", "pipelines", "validate", str(path)],
        cwd=repo_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert f"{path}:" in result.stderr and ": orchestrator.schedule: invalid cron expression" in result.stderr
    assert sorted(os.listdir(tmp_path)) == before


def test_component_memory_converts_to_bytes():
    from pipelines.spec.orchestrator import ComponentRunSpec

    assert ComponentRunSpec(memory="16Gi").memory_bytes == 16 * 2**30
    assert ComponentRunSpec(memory="500M").memory_bytes == 500 * 10**6
