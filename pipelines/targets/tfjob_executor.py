"""The Trainer's executor on the kubeflow target with several workers: it runs training as a TFJob.

The Trainer step's own container only launches: it builds the TFJob whose
replicas run TFX's Trainer executor (`tfx.scripts.run_executor`, as TFX's
Vertex trainer does), writes the manifest next to the model, submits it
with kubeflow-training's TrainingClient, reports its status and waits.
Settings come from the Trainer's `custom_config["tfjob"]`, which the
kubeflow target fills in (`poll_seconds`, default 15: how often the job's
status is read).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import yaml
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils

from pipelines.spec.orchestrator import ComponentRunSpec
from pipelines.targets.tfjob import TFJobLauncher, as_manifest, tfjob_model

__all__ = ["Executor", "TFJOB_KEY", "TRAINER_EXECUTOR", "worker_command"]

TFJOB_KEY = "tfjob"
TRAINER_EXECUTOR = "tfx.components.trainer.executor.GenericExecutor"


def worker_command(input_dict, output_dict, exec_properties: dict[str, Any]) -> list[str]:
    """The command every replica runs: TFX's Trainer executor on the same inputs and outputs."""
    return [
        "python",
        "-m",
        "tfx.scripts.run_executor",
        "--executor_class_path",
        TRAINER_EXECUTOR,
        "--inputs",
        artifact_utils.jsonify_artifact_dict(input_dict),
        "--outputs",
        artifact_utils.jsonify_artifact_dict(output_dict),
        "--exec-properties",
        json.dumps(exec_properties, sort_keys=True),
    ]


class Executor(base_executor.BaseExecutor):
    """Launches the TFJob and waits for it; the replicas write the model."""

    def Do(self, input_dict, output_dict, exec_properties):  # noqa: N802 - TFX's executor API
        custom_config = json.loads(exec_properties.get("custom_config") or "{}")
        job_config = custom_config.pop(TFJOB_KEY)
        worker_properties = dict(exec_properties, custom_config=json.dumps(custom_config))
        settings = ComponentRunSpec(**job_config["settings"])
        job = tfjob_model(
            f"{job_config['name']}-{time.strftime('%Y%m%d-%H%M%S')}",
            job_config["namespace"],
            job_config["image"],
            worker_command(input_dict, output_dict, worker_properties),
            settings,
            job_config.get("service_account"),
            job_config.get("platform", "none"),
        )
        model_uri = artifact_utils.get_single_uri(output_dict["model_run"])
        os.makedirs(model_uri, exist_ok=True)
        with open(os.path.join(model_uri, "tfjob.yaml"), "w", encoding="utf-8") as handle:
            yaml.safe_dump(as_manifest(job), handle, sort_keys=False)
        launcher = TFJobLauncher(report=print, poll_seconds=job_config.get("poll_seconds", 15.0))
        launcher.run(job, timeout_seconds=settings.timeout_seconds)
