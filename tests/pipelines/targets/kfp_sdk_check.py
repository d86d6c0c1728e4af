"""Loads `compile --target kubeflow` output with the orchestrators' own SDKs; prints what they read as JSON.

Run by `test_kfp_sdk.py` with `.venv-kfp/bin/python` (kfp 2 needs protobuf 4+, TFX 1.16 pins 3.20):
    kfp_sdk_check.py OUTPUT_DIR
Every step raises if the SDK refuses the file.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

warnings.simplefilter("ignore")


def main(out: str) -> dict:
    import kfp_server_api
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import aiplatform
    from google.cloud.aiplatform_v1.types import CreateScheduleRequest
    from google.protobuf import json_format
    from kfp import components
    from kfp.client import client as kfp_client
    from kfp.kubernetes import kubernetes_executor_config_pb2
    from kfp.pipeline_spec import pipeline_spec_pb2

    package = os.path.join(out, "pipeline.yaml")
    result: dict = {}
    component = components.load_component_from_file(package)
    result["component_name"] = component.name
    # What kfp.Client.upload_pipeline / create_run_from_pipeline_package read from the package.
    doc = kfp_client._extract_pipeline_yaml(package)
    result["default_pipeline_root"] = doc.pipeline_spec.default_pipeline_root
    result["executors"] = sorted(doc.pipeline_spec.deployment_spec["executors"].keys())
    kubernetes = doc.platform_spec.platforms["kubernetes"]
    result["kubernetes_executors"] = {}
    for label, config in kubernetes.deployment_spec.executors.items():
        message = kubernetes_executor_config_pb2.KubernetesExecutorConfig()
        json_format.ParseDict(json_format.MessageToDict(config), message, ignore_unknown_fields=False)
        result["kubernetes_executors"][label] = json_format.MessageToDict(message)

    job = aiplatform.PipelineJob(
        display_name="check",
        template_path=os.path.join(out, "vertex_pipeline_job.json"),
        project="my-project",
        location="us-central1",
        credentials=AnonymousCredentials(),
    )
    result["vertex_job_root"] = job._gca_resource.runtime_config.gcs_output_directory

    class Response:
        def __init__(self, payload):
            self.data = json.dumps(payload)

    with open(os.path.join(out, "recurring_run.json"), encoding="utf-8") as handle:
        recurring = kfp_server_api.ApiClient().deserialize(Response(json.load(handle)), "V2beta1RecurringRun")
    inline = recurring.pipeline_spec
    json_format.ParseDict(inline["pipeline_spec"], pipeline_spec_pb2.PipelineSpec())
    json_format.ParseDict(inline["platform_spec"], pipeline_spec_pb2.PlatformSpec())
    result["recurring_cron"] = recurring.trigger.cron_schedule.cron

    with open(os.path.join(out, "vertex_schedule.json"), encoding="utf-8") as handle:
        request = CreateScheduleRequest.from_json(handle.read(), ignore_unknown_fields=False)
    result["vertex_cron"] = request.schedule.cron
    result["vertex_schedule_root"] = (
        request.schedule.create_pipeline_job_request.pipeline_job.runtime_config.gcs_output_directory
    )
    return result


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
