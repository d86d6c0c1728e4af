"""`compile --target kubeflow`: the KFP package (pipeline.yaml) and the Vertex PipelineJob, parsed with
kfp-pipeline-spec, hold resources, images, retries and GPU placement; the schedule files, parsed with
kfp_server_api's and aiplatform's own models, and the TFJob manifest sit next to them.
`test_kfp_sdk.py` loads the same files with the kfp 2 SDK itself.

Needs the `kfp` extra (kfp-pipeline-spec, kfp-server-api): `make extras`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from fake_kfp import as_kfp_model
from taxi_fixtures import REPO, taxi_spec, write_spec

pipeline_spec_pb2 = pytest.importorskip("kfp.pipeline_spec.pipeline_spec_pb2")
pytest.importorskip("kfp_server_api")

IMAGE = "registry.example/yaml-tfx:0.1.0"
ROOT = "gs://my-bucket/pipelines/taxi"
ORCHESTRATOR = {
    "target": "kubeflow",
    "schedule": "30 2 * * 1-5",
    "platform": "gke",
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


def kubeflow_spec(data: str, folder, **orchestrator) -> str:
    """A kubeflow spec file in `folder` (root on an object store, as the target requires)."""
    return write_spec(folder / "spec.yaml", taxi_spec(data, ROOT, orchestrator=dict(ORCHESTRATOR, **orchestrator)))


@pytest.fixture(scope="module")
def compiled(taxi_sample_csv, tmp_path_factory):
    root = tmp_path_factory.mktemp("kubeflow")
    spec_file = kubeflow_spec(taxi_sample_csv, root)
    out = root / "out"
    completed = compile_cli(spec_file, "--target", "kubeflow", "--output", str(out))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    from google.protobuf import json_format

    job = pipeline_spec_pb2.PipelineJob()
    json_format.Parse((out / "vertex_pipeline_job.json").read_text(), job)
    documents = list(yaml.safe_load_all((out / "pipeline.yaml").read_text()))
    package = pipeline_spec_pb2.PipelineSpec()
    json_format.ParseDict(documents[0], package)
    platform = pipeline_spec_pb2.PlatformSpec()
    json_format.ParseDict(documents[1], platform)
    return {"out": out, "job": job, "package": package, "platform": documents[1], "completed": completed}


def _executors(job) -> dict:
    from google.protobuf import json_format

    spec = pipeline_spec_pb2.PipelineSpec()
    json_format.ParseDict(json_format.MessageToDict(job.pipeline_spec), spec)
    return _package_executors(spec)


def _package_executors(spec) -> dict:
    from google.protobuf import json_format

    deployment = pipeline_spec_pb2.PipelineDeploymentConfig()
    json_format.ParseDict(json_format.MessageToDict(spec.deployment_spec), deployment)
    return spec, dict(deployment.executors)


def test_vertex_job_parses_as_a_kfp_pipeline_job_named_for_kubeflow(compiled):
    spec, executors = _executors(compiled["job"])
    assert spec.pipeline_info.name == "chicago-taxi"
    assert {"Trainer_executor", "Evaluator_executor", "Transform_executor", "Pusher_executor"} <= set(executors)
    assert "Compiled chicago_taxi for kubeflow:" in compiled["completed"].stdout
    assert compiled["job"].runtime_config.gcs_output_directory == f"{ROOT}/artifacts"


def test_pipeline_yaml_is_the_pipeline_spec_with_the_object_store_root(compiled):
    package = compiled["package"]
    _, executors = _package_executors(package)
    assert package.pipeline_info.name == "chicago-taxi"
    assert package.default_pipeline_root == f"{ROOT}/artifacts"
    assert set(executors) == set(_executors(compiled["job"])[1])


def test_gpus_on_gke_are_the_gpu_resource_on_nodes_labelled_with_the_accelerator(compiled):
    trainer = _package_executors(compiled["package"])[1]["Trainer_executor"].container.resources
    assert trainer.accelerator.type == "nvidia.com/gpu" and trainer.accelerator.count == 2
    executors = compiled["platform"]["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    assert executors == {
        "Trainer_executor": {
            "nodeSelector": {"labels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        }
    }


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


def test_schedule_is_a_kfp_recurring_run_with_the_spec_inline(compiled):
    body = json.loads((compiled["out"] / "recurring_run.json").read_text())
    recurring = as_kfp_model(body, "V2beta1RecurringRun")
    assert recurring.trigger.cron_schedule.cron == "0 30 2 * * 1,2,3,4,5"  # robfig/cron: seconds first
    assert recurring.runtime_config.pipeline_root == f"{ROOT}/artifacts"
    assert recurring.mode == "ENABLE" and recurring.max_concurrency == "1"
    assert recurring.pipeline_spec["pipeline_spec"]["pipelineInfo"]["name"] == "chicago-taxi"
    assert "kubernetes" in recurring.pipeline_spec["platform_spec"]["platforms"]


def test_schedule_is_a_vertex_create_schedule_request_holding_the_job(compiled):
    from google.cloud.aiplatform_v1.types import schedule_service

    text = (compiled["out"] / "vertex_schedule.json").read_text()
    request = schedule_service.CreateScheduleRequest.from_json(text, ignore_unknown_fields=False)
    assert request.schedule.cron == "30 2 * * 1,2,3,4,5"
    assert request.schedule.max_concurrent_run_count == 1
    job = request.schedule.create_pipeline_job_request.pipeline_job
    assert job.runtime_config.gcs_output_directory == f"{ROOT}/artifacts"
    assert job.pipeline_spec["pipelineInfo"]["name"] == "chicago-taxi"


def test_sunday_as_7_reaches_kfp_and_vertex_as_0(taxi_sample_csv, tmp_path):
    from pipelines.load import load_spec
    from pipelines.targets import compile_target

    compile_target(
        load_spec(kubeflow_spec(taxi_sample_csv, tmp_path, schedule="0 4 * * 5-7")), "kubeflow", str(tmp_path / "out")
    )

    recurring = json.loads((tmp_path / "out" / "recurring_run.json").read_text())
    vertex = json.loads((tmp_path / "out" / "vertex_schedule.json").read_text())
    assert recurring["trigger"]["cron_schedule"]["cron"] == "0 0 4 * * 0,5,6"
    assert vertex["schedule"]["cron"] == "0 4 * * 0,5,6"


def test_a_local_root_is_refused_with_the_key_and_an_example(taxi_sample_csv, tmp_path):
    local = dict(ORCHESTRATOR, target="local")
    spec_file = write_spec(
        tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "run"), orchestrator=local)
    )

    completed = compile_cli(spec_file, "--target", "kubeflow", "--output", str(tmp_path / "out"))

    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "pipeline.root: the kubeflow target needs an object-store pipeline root" in completed.stderr
    assert "Example: `root: gs://my-bucket/pipelines/chicago_taxi`" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / "out").exists()


def test_what_kubeflow_cannot_honour_is_reported_not_dropped(compiled):
    stderr = compiled["completed"].stderr
    assert "warning: orchestrator.components.Evaluator: the kubeflow target cannot honour timeout_seconds=900" in stderr


def test_several_trainer_workers_launch_a_tfjob_and_write_its_manifest(taxi_sample_csv, tmp_path):
    from pipelines.load import load_spec
    from pipelines.targets import compile_target

    spec_file = kubeflow_spec(
        taxi_sample_csv,
        tmp_path,
        components={"Trainer": {"gpus": 1, "accelerator": "NVIDIA_TESLA_A100", "workers": 3, "timeout_seconds": 7200}},
        platform="nvidia-gfd",
    )
    compiled = compile_target(load_spec(spec_file), "kubeflow", str(tmp_path / "out"))

    assert [os.path.basename(f) for f in compiled.files] == [
        "pipeline.yaml",
        "vertex_pipeline_job.json",
        "tfjob.yaml",
        "recurring_run.json",
        "vertex_schedule.json",
    ]
    job = json.loads((tmp_path / "out" / "vertex_pipeline_job.json").read_text())
    trainer = job["pipelineSpec"]["deploymentSpec"]["executors"]["Trainer_executor"]["container"]
    assert trainer["args"][:2] == ["--executor_class_path", "pipelines.targets.tfjob_executor.Executor"]
    manifest = yaml.safe_load((tmp_path / "out" / "tfjob.yaml").read_text())
    assert manifest["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 2
    assert manifest["spec"]["runPolicy"]["activeDeadlineSeconds"] == 7200
    pod = manifest["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {
            "key": "nvidia.com/gpu.product",
            "operator": "In",
            "values": ["NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-PCIE-40GB"],
        }
    ]
    assert pod["tolerations"] == [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
    assert compiled.warnings == []


def test_with_a_vertex_region_the_trainer_gets_vertex_worker_pools(taxi_sample_csv, tmp_path):
    from pipelines.load import load_spec
    from pipelines.targets import compile_target

    spec_file = kubeflow_spec(
        taxi_sample_csv,
        tmp_path,
        components={"Trainer": {"cpu": 8, "gpus": 2, "accelerator": "NVIDIA_TESLA_V100", "workers": 4}},
        kubeflow={"vertex_region": "europe-west4", "vertex_project": "my-project"},
    )
    compile_target(load_spec(spec_file), "kubeflow", str(tmp_path / "out"))

    job = json.loads((tmp_path / "out" / "vertex_pipeline_job.json").read_text())
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


def test_warm_start_and_predict_compile_for_kubeflow_with_tfx_s_own_resolver_strategy(taxi_sample_csv, tmp_path):
    spec = taxi_spec(taxi_sample_csv, ROOT, orchestrator=dict(ORCHESTRATOR))
    spec["training"]["warm_start"] = True
    spec["predict"] = {"enabled": True}
    out = tmp_path / "out"
    completed = compile_cli(write_spec(tmp_path / "spec.yaml", spec), "--target", "kubeflow", "--output", str(out))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    package = yaml.safe_load_all((out / "pipeline.yaml").read_text())
    text = json.dumps(next(package))
    tasks = json.loads(text)["root"]["dag"]["tasks"]
    # KFP v2 compiles only TFX's own strategies: both resolvers became LatestBlessedModelStrategy's two queries.
    for resolver in ("WarmStartResolver", "BaselineResolver"):
        assert {f"{resolver}-model-resolver", f"{resolver}-model-blessing-resolver"} <= set(tasks)
    assert "LatestBlessedBaselineStrategy" not in text and "BulkInferrer" in tasks
    base_model = tasks["Trainer"]["inputs"]["artifacts"]["base_model"]["taskOutputArtifact"]
    assert base_model == {"outputArtifactKey": "model", "producerTask": "WarmStartResolver-model-resolver"}
