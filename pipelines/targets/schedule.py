"""One `orchestrator.schedule` (cron) as each engine wants it, built with the engines' own models.

- Airflow: the DAG's `schedule` (five-field cron or a macro, as written;
  Airflow reads it with croniter, as `validate` does).
- Kubeflow Pipelines: a `V2beta1RecurringRun` from `kfp_server_api` (the
  REST client the KFP SDK's `Client.create_recurring_run` sends), with the
  pipeline spec inline and robfig/cron's six fields.
- Vertex AI: a `CreateScheduleRequest` from `google.cloud.aiplatform_v1`,
  holding the whole PipelineJob.
"""

from __future__ import annotations

import json

from pipelines.spec.cron import kubeflow_cron, vertex_cron

__all__ = ["airflow_schedule", "kubeflow_recurring_run", "vertex_schedule_request"]


def airflow_schedule(cron: str | None) -> str | None:
    return cron.strip() if cron else None


def kubeflow_recurring_run(
    name: str, cron: str, pipeline_doc: dict, pipeline_root: str, start_date: str, service_account: str | None = None
) -> dict:
    """The body of `POST /apis/v2beta1/recurringruns`, as `kfp.Client.create_recurring_run` builds it.

    Args:
        name: The pipeline's display name.
        cron: The spec's five-field cron or macro.
        pipeline_doc: The pipeline spec dict, or `{pipeline_spec, platform_spec}` when there is a platform spec
            (the same shape the SDK sends for a package with two YAML documents).
        pipeline_root: The object-store root runs write to.
        start_date: `YYYY-MM-DD`, the first day the schedule counts from.
        service_account: The Kubernetes service account runs use (None: the namespace default).

    Returns:
        A JSON-able dict: `kfp_server_api`'s model, serialized by its own ApiClient.
    """
    import kfp_server_api

    recurring_run = kfp_server_api.V2beta1RecurringRun(
        display_name=f"{name}-schedule",
        description=f"Runs {name} on cron `{cron}`.",
        pipeline_spec=pipeline_doc,
        runtime_config=kfp_server_api.V2beta1RuntimeConfig(pipeline_root=pipeline_root, parameters={}),
        mode=kfp_server_api.RecurringRunMode.ENABLE,
        max_concurrency="1",
        no_catchup=True,
        service_account=service_account,
        trigger=kfp_server_api.V2beta1Trigger(
            cron_schedule=kfp_server_api.V2beta1CronSchedule(
                cron=kubeflow_cron(cron), start_time=f"{start_date}T00:00:00Z"
            )
        ),
    )
    return kfp_server_api.ApiClient().sanitize_for_serialization(recurring_run)


def vertex_schedule_request(name: str, cron: str, pipeline_job: dict, project: str, region: str) -> dict:
    """A Vertex AI `schedules.create` request that runs `pipeline_job` on `cron`.

    Args:
        pipeline_job: The PipelineJob as JSON (camelCase), e.g. `vertex_pipeline_job.json`.

    Returns:
        The `CreateScheduleRequest` as JSON (camelCase), built and checked by aiplatform's own types.
    """
    from google.cloud.aiplatform_v1 import types

    parent = f"projects/{project}/locations/{region}"
    job = types.PipelineJob.from_json(json.dumps(pipeline_job), ignore_unknown_fields=False)
    request = types.CreateScheduleRequest(
        parent=parent,
        schedule=types.Schedule(
            display_name=f"{name}-schedule",
            cron=vertex_cron(cron),
            max_concurrent_run_count=1,
            create_pipeline_job_request=types.CreatePipelineJobRequest(parent=parent, pipeline_job=job),
        ),
    )
    return json.loads(types.CreateScheduleRequest.to_json(request))
