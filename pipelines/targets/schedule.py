"""One `orchestrator.schedule` (cron) as each engine wants it.

- Airflow: the DAG's `schedule` (five-field cron or a macro, as written).
- Kubeflow Pipelines: a recurring-run body for the KFP v2beta1 REST API
  (`POST /apis/v2beta1/recurringruns`); KFP's cron has a leading seconds field.
- Vertex AI: a `projects.locations.schedules.create` request body.
"""

from __future__ import annotations

from pipelines.spec.cron import five_field

__all__ = ["airflow_schedule", "kubeflow_recurring_run", "vertex_schedule_request", "kubeflow_cron"]


def airflow_schedule(cron: str | None) -> str | None:
    return cron.strip() if cron else None


def kubeflow_cron(cron: str) -> str:
    """KFP's six-field cron (seconds first): `0 3 * * *` -> `0 0 3 * * *`."""
    return "0 " + five_field(cron)


def kubeflow_recurring_run(name: str, cron: str, pipeline_file: str, start_date: str) -> dict:
    """A KFP v2beta1 RecurringRun for the compiled pipeline.

    `pipeline_spec` is left for the client to fill from `pipeline_file` (the
    KFP SDK's `Client.create_recurring_run(..., pipeline_package_path=...)`
    does that); `max_concurrency` 1 keeps runs of one pipeline from overlapping.
    """
    return {
        "display_name": f"{name}-schedule",
        "description": f"Runs {name} on cron `{cron}`.",
        "pipeline_package_path": pipeline_file,
        "mode": "ENABLE",
        "max_concurrency": "1",
        "no_catchup": True,
        "trigger": {"cron_schedule": {"cron": kubeflow_cron(cron), "start_time": f"{start_date}T00:00:00Z"}},
    }


def vertex_schedule_request(name: str, cron: str, pipeline_file: str, project: str, region: str) -> dict:
    """A Vertex AI `schedules.create` request that runs the compiled PipelineJob.

    `createPipelineJobRequest.pipelineJob` is the content of `pipeline_file`
    (kept as a path here so the two files stay one source of truth).
    """
    parent = f"projects/{project}/locations/{region}"
    return {
        "parent": parent,
        "schedule": {
            "displayName": f"{name}-schedule",
            "cron": five_field(cron),
            "maxConcurrentRunCount": "1",
            "createPipelineJobRequest": {"parent": parent, "pipelineJobFile": pipeline_file},
        },
    }
