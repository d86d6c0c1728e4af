"""The kubeflow target's files, loaded by the kfp 2 SDK, kfp-kubernetes, kfp_server_api and google-cloud-aiplatform.

kfp 2 needs protobuf 4+ while TFX 1.16 pins protobuf 3.20, so these SDKs live in `.venv-kfp`
(`make extras` builds it from requirements-kfp.lock) and run `kfp_sdk_check.py` on the compiled output.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

KFP_PYTHON = os.path.join(os.environ.get("KFP_VENV", os.path.join(REPO, ".venv-kfp")), "bin", "python")
CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kfp_sdk_check.py")

if not os.path.exists(KFP_PYTHON):
    pytest.skip(f"no kfp SDK venv at {KFP_PYTHON}: `make extras` creates it", allow_module_level=True)

ROOT = "gs://my-bucket/pipelines/taxi"


@pytest.fixture(scope="module")
def sdk_view(taxi_sample_csv, tmp_path_factory):
    from pipelines.load import load_spec
    from pipelines.targets import compile_target

    folder = tmp_path_factory.mktemp("kfp_sdk")
    orchestrator = {
        "target": "kubeflow",
        "schedule": "15 1 * * 7",
        "platform": "nvidia-gfd",
        "components": {"Trainer": {"gpus": 1, "accelerator": "NVIDIA_L4", "cpu": 4}},
    }
    spec_file = write_spec(folder / "spec.yaml", taxi_spec(taxi_sample_csv, ROOT, orchestrator=orchestrator))
    compile_target(load_spec(spec_file), "kubeflow", str(folder / "out"))
    completed = subprocess.run(
        [KFP_PYTHON, CHECK, str(folder / "out")], capture_output=True, text=True, timeout=300, cwd=str(folder)
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_kfp_loads_the_package_as_a_pipeline(sdk_view):
    assert sdk_view["component_name"] == "chicago-taxi"
    assert sdk_view["default_pipeline_root"] == f"{ROOT}/artifacts"
    assert "Trainer_executor" in sdk_view["executors"]


def test_kfp_kubernetes_reads_the_gpu_placement(sdk_view):
    assert sdk_view["kubernetes_executors"] == {
        "Trainer_executor": {
            "nodeSelector": {"labels": {"nvidia.com/gpu.product": "NVIDIA-L4"}},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        }
    }


def test_aiplatform_builds_the_pipeline_job_from_the_vertex_file(sdk_view):
    assert sdk_view["vertex_job_root"] == f"{ROOT}/artifacts"


def test_schedules_parse_with_the_sdks_models_in_their_dialects(sdk_view):
    assert sdk_view["recurring_cron"] == "0 15 1 * * 0"  # robfig/cron: seconds first, Sunday is 0
    assert sdk_view["vertex_cron"] == "15 1 * * 0"
    assert sdk_view["vertex_schedule_root"] == f"{ROOT}/artifacts"
