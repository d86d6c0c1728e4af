"""`compile --target kubeflow`: the PipelineJob, parsed with kfp-pipeline-spec, holds resources, images,
retries; the schedule files and the TFJob manifest sit next to it.

Needs the `kfp` extra (kfp-pipeline-spec): `pip install -e .[kfp]`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from taxi_fixtures import REPO, taxi_spec, write_spec

pipeline_spec_pb2 = pytest.importorskip("kfp.pipeline_spec.pipeline_spec_pb2")

IMAGE = "registry.example/yaml-tfx:0.1.0"
ORCHESTRATOR = {
    "target": "kubeflow",
    "schedule": "30 2 * * 1-5",
    "image": IMAGE,
    "components": {
        "Transform": {"cpu": 4, "memory": "16Gi"},
        "Evaluator": {"cpu": 2, "memory": "8Gi", "retries": 3, "timeout_seconds": 900},
        "Trainer": {"cpu": 8, "memory": "32Gi", "gpus": 2, "accelerator": "NVIDIA_TESLA_T4"},
    },
}


def compile_cli(spec_file: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", "compile", spec_file, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def compiled(taxi_sample_csv, tmp_path_factory):
    root = tmp_path_factory.mktemp("kubeflow")
    spec_file = write_spec(root / "spec.yaml", taxi_spec(taxi_sample_csv, str(root / "run"), orchestrator=ORCHESTRATOR))
    out = root / "out"
    completed = compile_cli(spec_file, "--target", "kubeflow", "--output", str(out))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    job = pipeline_spec_pb2.PipelineJob()
    from google.protobuf import json_format

    json_format.Parse((out / "pipeline.json").read_text(), job)
    return {"out": out, "job": job, "completed": completed, "root": root}


def _executors(job) -> dict:
    from google.protobuf import json_format

    spec = pipeline_spec_pb2.PipelineSpec()
    json_format.ParseDict(json_format.MessageToDict(job.pipeline_spec), spec)
    deployment = pipeline_spec_pb2.PipelineDeploymentConfig()
    json_format.ParseDict(json_format.MessageToDict(spec.deployment_spec), deployment)
    return spec, dict(deployment.executors)


def test_pipeline_json_parses_as_a_kfp_pipeline_job_named_for_kubeflow(compiled):
    spec, executors = _executors(compiled["job"])
    assert spec.pipeline_info.name == "chicago-taxi"
    assert {"Trainer_executor", "Evaluator_executor", "Transform_executor", "Pusher_executor"} <= set(executors)
    assert "Compiled chicago_taxi for kubeflow:" in compiled["completed"].stdout


def test_every_component_container_runs_the_spec_image(compiled):
    _, executors = _executors(compiled["job"])
    images = {name: e.container.image for name, e in executors.items() if e.HasField("container")}
    assert images and set(images.values()) == {IMAGE}, images


def test_declared_resources_are_in_the_containers_and_the_trainer_requests_its_gpus(compiled):
    _, executors = _executors(compiled["job"])
    trainer = executors["Trainer_executor"].container.resources
    assert trainer.accelerator.type == "NVIDIA_TESLA_T4" and trainer.accelerator.count == 2
    assert trainer.cpu_limit == 8 and trainer.memory_limit == pytest.approx(32 * 2**30 / 1e9)
    transform = executors["Transform_executor"].container.resources
    assert transform.cpu_limit == 4 and transform.memory_request == pytest.approx(16 * 2**30 / 1e9)
    assert not executors["Pusher_executor"].container.HasField("resources")


def test_retries_become_the_task_retry_policy(compiled):
    spec, _ = _executors(compiled["job"])
    tasks = spec.root.dag.tasks
    assert tasks["Evaluator"].retry_policy.max_retry_count == 3
    assert tasks["Pusher"].retry_policy.max_retry_count == 0


def test_schedule_is_written_as_a_kfp_recurring_run_and_a_vertex_schedule(compiled):
    recurring = json.loads((compiled["out"] / "recurring_run.json").read_text())
    assert recurring["trigger"]["cron_schedule"]["cron"] == "0 30 2 * * 1-5"  # KFP counts seconds first
    assert recurring["pipeline_package_path"] == "pipeline.json"
    vertex = json.loads((compiled["out"] / "vertex_schedule.json").read_text())
    assert vertex["schedule"]["cron"] == "30 2 * * 1-5"
    assert vertex["schedule"]["createPipelineJobRequest"]["pipelineJobFile"] == "pipeline.json"


def test_what_kubeflow_cannot_honour_is_reported_not_dropped(compiled):
    stderr = compiled["completed"].stderr
    assert "warning: orchestrator.components.Evaluator: the kubeflow target cannot honour timeout_seconds=900" in stderr


def test_several_trainer_workers_launch_a_tfjob_and_write_its_manifest(taxi_sample_csv, tmp_path):
    from pipelines.spec import load_spec
    from pipelines.targets import compile_target

    orchestrator = dict(ORCHESTRATOR, components={"Trainer": {"gpus": 1, "workers": 3, "timeout_seconds": 7200}})
    spec_file = write_spec(
        tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "run"), orchestrator=orchestrator)
    )
    compiled = compile_target(load_spec(spec_file), "kubeflow", str(tmp_path / "out"))

    assert [os.path.basename(f) for f in compiled.files] == [
        "pipeline.json",
        "tfjob.yaml",
        "recurring_run.json",
        "vertex_schedule.json",
    ]
    job = json.loads((tmp_path / "out" / "pipeline.json").read_text())
    trainer = job["pipelineSpec"]["deploymentSpec"]["executors"]["Trainer_executor"]["container"]
    assert trainer["args"][:2] == ["--executor_class_path", "pipelines.targets.tfjob_executor.Executor"]
    manifest = yaml.safe_load((tmp_path / "out" / "tfjob.yaml").read_text())
    assert manifest["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 2
    assert manifest["spec"]["runPolicy"]["activeDeadlineSeconds"] == 7200
    assert compiled.warnings == []


def test_with_a_vertex_region_the_trainer_gets_vertex_worker_pools(taxi_sample_csv, tmp_path):
    from pipelines.spec import load_spec
    from pipelines.targets import compile_target

    orchestrator = dict(
        ORCHESTRATOR,
        components={"Trainer": {"cpu": 8, "gpus": 2, "accelerator": "NVIDIA_TESLA_V100", "workers": 4}},
        kubeflow={"vertex_region": "europe-west4", "vertex_project": "my-project"},
    )
    spec_file = write_spec(
        tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "run"), orchestrator=orchestrator)
    )
    compile_target(load_spec(spec_file), "kubeflow", str(tmp_path / "out"))

    job = json.loads((tmp_path / "out" / "pipeline.json").read_text())
    trainer = job["pipelineSpec"]["deploymentSpec"]["executors"]["Trainer_executor"]["container"]
    assert "tfx.extensions.google_cloud_ai_platform.trainer.executor.GenericExecutor" in trainer["args"]
    parameters = job["pipelineSpec"]["components"]["Trainer"]["inputDefinitions"]["parameters"]
    assert "custom_config" in parameters
    value = job["pipelineSpec"]["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]["custom_config"]
    custom_config = json.loads(value["runtimeValue"]["constantValue"]["stringValue"])
    assert custom_config["ai_platform_enable_vertex"] is True
    assert custom_config["ai_platform_vertex_region"] == "europe-west4"
    pools = custom_config["ai_platform_training_args"]["job_spec"]["worker_pool_specs"]
    assert [p["replica_count"] for p in pools] == [1, 3]
    assert pools[0]["machine_spec"] == {
        "machine_type": "n1-standard-8",
        "accelerator_type": "NVIDIA_TESLA_V100",
        "accelerator_count": 2,
    }
    assert {p["container_spec"]["image_uri"] for p in pools} == {IMAGE}
