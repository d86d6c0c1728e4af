"""`submit --target vertex`: creates the compiled PipelineJob (or its Schedule) on Vertex AI Pipelines.

The calls are google-cloud-aiplatform's own: `aiplatform.PipelineJob(template_path=...).submit()`,
which checks the pipeline root's bucket first (creating it, and granting the run's service account,
when it is missing), then `pipelineJobs.create`; with `--schedule`, `PipelineJob.create_schedule`
(`schedules.create`) on the cron of the compiled `vertex_schedule.json`.

aiplatform 2 needs protobuf 4+ while TFX 1.16 pins 3.20, so the calls run in `.venv-kfp` (`make extras`;
another venv with `KFP_VENV`) as `vertex_submit_job.py`, which imports nothing from TFX. Credentials
are the Application Default Credentials; `--endpoint http://HOST:PORT` (a stand-in API) uses anonymous
ones and REST. `STORAGE_EMULATOR_HOST` points the bucket check elsewhere, as google-cloud-storage reads it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess

from pipelines.targets.submit import SubmitError

__all__ = ["VertexSubmission", "kfp_python", "submit_vertex"]

JOB_FILE, SCHEDULE_FILE = "vertex_pipeline_job.json", "vertex_schedule.json"
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vertex_submit_job.py")


@dataclasses.dataclass(frozen=True)
class VertexSubmission:
    """What Vertex AI answered: the created job or schedule, and aiplatform's warnings (one line each)."""

    job: str | None = None
    dashboard: str | None = None
    schedule: str | None = None
    cron: str | None = None
    warnings: tuple[str, ...] = ()

    def links(self) -> list[str]:
        found = []
        if self.job:
            found.append(f"pipeline job: {self.job}")
        if self.dashboard:
            found.append(f"console: {self.dashboard}")
        if self.schedule:
            found.append(f"schedule: {self.schedule} (cron `{self.cron}`)")
        return found


def kfp_python() -> str:
    """The interpreter of the venv that has aiplatform: `$KFP_VENV/bin/python`, else `<project>/.venv-kfp`.

    Raises:
        SubmitError: there is no such interpreter.
    """
    venv = os.environ.get("KFP_VENV") or os.path.join(_REPO, ".venv-kfp")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        raise SubmitError(
            f"google-cloud-aiplatform is not installed: no venv at {venv}. Expected `.venv-kfp` with aiplatform "
            "(its protobuf 4+ cannot share TFX's venv). Run `make extras`, or set KFP_VENV to a venv that has it."
        )
    return python


def _job_files(compiled: str, schedule: bool) -> tuple[str, str | None]:
    """(vertex_pipeline_job.json, vertex_schedule.json or None) for a compiled folder or the job file itself."""
    folder = compiled if os.path.isdir(compiled) else os.path.dirname(os.path.abspath(compiled))
    job_file = os.path.join(compiled, JOB_FILE) if os.path.isdir(compiled) else compiled
    if not os.path.isfile(job_file) or not job_file.endswith(".json"):
        raise SubmitError(
            f"no Vertex AI pipeline job. Expected `{JOB_FILE}` from `python -m pipelines compile SPEC --target "
            f"kubeflow`, or the folder holding it. Received: {compiled}. Compile first, then submit that folder."
        )
    if not schedule:
        return job_file, None
    schedule_file = os.path.join(folder, SCHEDULE_FILE)
    if not os.path.isfile(schedule_file):
        raise SubmitError(
            f"no {SCHEDULE_FILE} next to {job_file}. Expected one: `orchestrator.schedule` writes it. "
            "Add a schedule to the spec and compile again, or submit without --schedule for one run."
        )
    return job_file, schedule_file


def submit_vertex(
    compiled: str,
    project: str,
    region: str,
    *,
    schedule: bool = False,
    service_account: str | None = None,
    endpoint: str | None = None,
    timeout: float = 60.0,
) -> VertexSubmission:
    """Creates the PipelineJob in `compiled` (the kubeflow output folder, or its vertex_pipeline_job.json).

    Args:
        compiled: The `compile --target kubeflow` folder, or its `vertex_pipeline_job.json`.
        project: The Google Cloud project.
        region: The Vertex AI region, e.g. `us-central1`.
        schedule: Create the schedule of `vertex_schedule.json` instead of one run.
        service_account: The service account the runs act as (default: the project's compute account).
        endpoint: Another API endpoint; an `http://` one is called with anonymous credentials.
        timeout: Seconds each API request may take.

    Returns:
        The created job's or schedule's resource name, the console link and aiplatform's warnings.

    Raises:
        SubmitError: no job file or aiplatform venv, no credentials, the endpoint cannot be reached, or the API
            refused the request (its answer is named).
    """
    job_file, schedule_file = _job_files(compiled, schedule)
    command = [kfp_python(), "-I", _CHILD, job_file, "--project", project, "--region", region]
    command += ["--timeout", f"{timeout:g}"]
    for flag, value in (("--schedule-file", schedule_file), ("--service-account", service_account)):
        if value:
            command += [flag, value]
    if endpoint:
        command += ["--endpoint", endpoint]
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout * 3 + 120)
    except subprocess.TimeoutExpired:
        raise SubmitError(
            f"Vertex AI did not answer within {timeout * 3 + 120:g}s. Expected the PipelineJob to be created. "
            "Check the network or proxy from here, and --endpoint if given."
        ) from None
    lines = completed.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict):
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        raise SubmitError(
            f"the aiplatform submission ({_CHILD}) stopped with exit code {completed.returncode}: {last}. Expected "
            f"one JSON line. Check that {command[0]} has google-cloud-aiplatform 2.x (`make extras` installs it)."
        )
    if "error" in answer:
        raise SubmitError(answer["error"])
    return VertexSubmission(
        job=answer.get("job"),
        dashboard=answer.get("dashboard"),
        schedule=answer.get("schedule"),
        cron=answer.get("cron"),
        warnings=tuple(answer.get("warnings") or ()),
    )
