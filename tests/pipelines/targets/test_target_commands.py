"""The command line around targets: what `run` refuses, what `compile` writes for local and beam."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def test_run_refuses_a_kubeflow_spec_and_says_how_to_compile_it(taxi_sample_csv, tmp_path):
    spec_file = write_spec(
        tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, "gs://bucket/taxi", orchestrator={"target": "kubeflow"})
    )
    completed = cli("run", spec_file)
    assert completed.returncode == 2
    assert "error: the kubeflow target is not run from here. Expected one of: local, beam." in completed.stderr
    assert f"python -m pipelines compile {spec_file} --target kubeflow" in completed.stderr
    assert os.listdir(tmp_path) == ["spec.yaml"]


def test_run_rejects_an_unknown_target_option():
    completed = cli("run", "--target", "kubeflow")
    assert completed.returncode == 2
    assert "invalid choice: 'kubeflow' (choose from 'local', 'beam')" in completed.stderr


def test_compile_for_beam_writes_the_ir_with_the_declared_args(taxi_sample_csv, tmp_path):
    from pipelines.load import load_spec
    from pipelines.targets import compile_target

    beam_args = ["--runner=DirectRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    spec = taxi_spec(taxi_sample_csv, str(tmp_path / "run"), orchestrator={"beam_args": beam_args})
    spec_file = write_spec(tmp_path / "spec.yaml", spec)
    compiled = compile_target(load_spec(spec_file), "beam", str(tmp_path / "out"))

    assert compiled.files == [str(tmp_path / "out" / "pipeline_ir.json")]
    ir = json.loads((tmp_path / "out" / "pipeline_ir.json").read_text())
    nodes = [n["pipelineNode"]["nodeInfo"]["id"] for n in ir["nodes"]]
    assert nodes[:2] == ["ExampleGen", "StatisticsGen"] and "Pusher" in nodes
    args = json.dumps(ir["deploymentConfig"])
    assert "--direct_running_mode=multi_processing" in args
    assert "apache_beam.runners.portability.fn_api_runner.FnApiRunner" in args  # not the DirectRunner's Prism detour


def test_a_local_run_of_an_object_store_root_is_refused_and_writes_nothing(taxi_sample_csv, tmp_path):
    spec = taxi_spec(taxi_sample_csv, "gs://bucket/taxi", orchestrator={"target": "kubeflow"})
    spec_file = write_spec(tmp_path / "spec.yaml", spec)

    completed = subprocess.run(
        [sys.executable, "-m", "pipelines", "run", spec_file, "--target", "local"],
        cwd=tmp_path,
        env=dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3"),
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert completed.returncode == 2
    assert (
        "pipeline.root: the local target keeps ML Metadata (a SQLite file) and logs under the root" in completed.stderr
    )
    assert "Traceback" not in completed.stderr
    assert os.listdir(tmp_path) == ["spec.yaml"]


@pytest.mark.parametrize("kubeflow", [{}, {"vertex_region": "us-central1", "vertex_project": "my-project"}])
def test_compile_for_kubeflow_checks_the_root_for_kubeflow_not_the_spec_target(taxi_sample_csv, tmp_path, kubeflow):
    """No `orchestrator.target` (so local) and a gs:// root: `--target kubeflow` is what is checked."""
    orchestrator = {"kubeflow": kubeflow} if kubeflow else {}
    spec_file = write_spec(
        tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, "gs://bucket/taxi", orchestrator=orchestrator)
    )

    completed = cli("compile", spec_file, "--target", "kubeflow", "--output", str(tmp_path / "out"))

    assert completed.returncode == 0, completed.stderr
    assert {"pipeline.yaml", "vertex_pipeline_job.json"} <= set(os.listdir(tmp_path / "out"))
    job = json.loads((tmp_path / "out" / "vertex_pipeline_job.json").read_text())
    assert job["runtimeConfig"]["gcsOutputDirectory"].startswith("gs://bucket/taxi/")


@pytest.mark.parametrize("target", ["local", "beam", "airflow"])
def test_compile_for_a_target_with_local_metadata_refuses_an_object_store_root(taxi_sample_csv, tmp_path, target):
    """`orchestrator.target: kubeflow` in the spec does not let `--target local|beam|airflow` take a gs:// root."""
    spec = taxi_spec(taxi_sample_csv, "gs://bucket/taxi", orchestrator={"target": "kubeflow"})
    spec_file = write_spec(tmp_path / "spec.yaml", spec)

    completed = cli("compile", spec_file, "--target", target, "--output", str(tmp_path / "out"))

    assert completed.returncode == 2, completed.stderr
    assert f"pipeline.root: the {target} target keeps ML Metadata (a SQLite file)" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / "out").exists()


def test_compile_for_kubeflow_checks_the_schedule_for_kubeflow(taxi_sample_csv, tmp_path):
    """`L` is valid cron for the local and airflow targets; compiled for kubeflow, it is refused."""
    spec = taxi_spec(taxi_sample_csv, "gs://bucket/taxi", orchestrator={"schedule": "0 3 L * *"})
    spec_file = write_spec(tmp_path / "spec.yaml", spec)

    completed = cli("compile", spec_file, "--target", "kubeflow", "--output", str(tmp_path / "out"))

    assert completed.returncode == 2, completed.stderr
    assert "Kubeflow Pipelines' and Vertex AI's schedulers do not accept" in completed.stderr
    assert not (tmp_path / "out").exists()


def test_compile_for_beam_checks_the_spec_for_beam_not_its_kubeflow_target(taxi_sample_csv, tmp_path):
    """A kubeflow spec's local root is what the beam target takes."""
    spec = taxi_spec(taxi_sample_csv, str(tmp_path / "run"), orchestrator={"target": "kubeflow"})
    spec_file = write_spec(tmp_path / "spec.yaml", spec)

    completed = cli("compile", spec_file, "--target", "beam", "--output", str(tmp_path / "out"))

    assert completed.returncode == 0, completed.stderr
    assert os.listdir(tmp_path / "out") == ["pipeline_ir.json"]
