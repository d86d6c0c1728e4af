"""Submits `vertex_pipeline_job.json` with google-cloud-aiplatform; run by `vertex_submit.py` in `.venv-kfp`.

aiplatform 2 needs protobuf 4+ and TFX 1.16 pins 3.20, so this file runs in its own interpreter
(`.venv-kfp/bin/python -I vertex_submit_job.py ...`) and imports nothing from this project or TFX.
It prints one JSON line: what Vertex answered (`job`, `schedule`, `dashboard`) and aiplatform's
warnings, each on one line (`warnings`), or `{"error": ...}`.

    vertex_submit_job.py JOB_FILE --project P --region R [--schedule-file F] [--service-account SA]
                         [--endpoint URL] [--timeout S]

With `--endpoint http://...` (a stand-in server) the calls use anonymous credentials and REST;
otherwise the Application Default Credentials and aiplatform's regional endpoint.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import warnings


class VertexError(RuntimeError):
    """One line for the user: what failed and what to check."""


class _OneLineWarnings(logging.StreamHandler):
    """Keeps aiplatform's warnings and errors as single lines (its bucket check logs whole tracebacks).

    A StreamHandler on the root logger, so that aiplatform's loggers add none of their own
    (`aiplatform.base.Logger` otherwise prints its INFO lines to stdout); it writes nothing itself.
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setLevel(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        line = record.getMessage().strip().replace("\n", " ")
        if record.exc_info and record.exc_info[1] is not None:
            line += f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        self.lines.append(line)


def _init(args) -> None:
    from google.cloud import aiplatform

    settings = {"project": args.project, "location": args.region}
    if args.endpoint:
        settings.update(api_endpoint=args.endpoint, api_transport="rest")
        if args.endpoint.startswith("http://"):
            from google.auth.credentials import AnonymousCredentials

            settings["credentials"] = AnonymousCredentials()
    aiplatform.init(**settings)


def _dashboard_url(resource_name: str) -> str:
    """The Cloud console page of a pipeline job (what aiplatform's private `PipelineJob._dashboard_uri` writes)."""
    from google.cloud.aiplatform_v1 import PipelineServiceClient

    fields = PipelineServiceClient.parse_pipeline_job_path(resource_name)
    return (
        f"https://console.cloud.google.com/vertex-ai/locations/{fields['location']}/pipelines/runs/"
        f"{fields['pipeline_job']}?project={fields['project']}"
    )


def _schedule_settings(schedule_file: str) -> tuple[str, str, int]:
    """(cron, display name, max concurrent runs) from the compiled `vertex_schedule.json`."""
    from google.cloud.aiplatform_v1.types import CreateScheduleRequest

    with open(schedule_file, encoding="utf-8") as handle:
        request = CreateScheduleRequest.from_json(handle.read(), ignore_unknown_fields=False)
    schedule = request.schedule
    return schedule.cron, schedule.display_name, schedule.max_concurrent_run_count or 1


def submit(args) -> dict:
    """Creates the PipelineJob (or, with a schedule file, its Schedule) and returns what Vertex answered.

    Args:
        args: The parsed command line (see the module docstring).

    Returns:
        `{"job", "dashboard"}` for a run, `{"schedule", "cron"}` for a schedule.

    Raises:
        VertexError: no credentials, the endpoint cannot be reached, or the API refused the request.
    """
    import google.auth.exceptions
    import requests
    from google.api_core import exceptions as api_exceptions
    from google.cloud import aiplatform

    where = args.endpoint or f"{args.region}-aiplatform.googleapis.com"
    try:
        _init(args)
        with open(args.job_file, encoding="utf-8") as handle:
            document = json.load(handle)
        name = document.get("displayName") or document["pipelineSpec"]["pipelineInfo"]["name"]
        job = aiplatform.PipelineJob(display_name=name, template_path=args.job_file)
        if args.schedule_file:
            cron, schedule_name, concurrent = _schedule_settings(args.schedule_file)
            schedule = job.create_schedule(
                cron=cron,
                display_name=schedule_name,
                max_concurrent_run_count=concurrent,
                service_account=args.service_account,
                create_request_timeout=args.timeout,
            )
            return {"schedule": schedule.resource_name, "cron": cron}
        job.submit(service_account=args.service_account, create_request_timeout=args.timeout)
        return {"job": job.resource_name, "dashboard": _dashboard_url(job.resource_name)}
    except google.auth.exceptions.DefaultCredentialsError:
        raise VertexError(
            "no Google Cloud credentials. Expected Application Default Credentials for project "
            f"{args.project}. Run `gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS)."
        ) from None
    except (requests.exceptions.ConnectionError, api_exceptions.RetryError, api_exceptions.ServiceUnavailable) as error:
        raise VertexError(
            f"cannot reach the Vertex AI API at {where}: {type(error).__name__}. Expected the Vertex AI endpoint of "
            f"region {args.region}. Check --region (and --endpoint, if given) and the network or proxy from here."
        ) from None
    except api_exceptions.GoogleAPICallError as error:
        raise VertexError(
            f"Vertex AI at {where} refused the submission: HTTP {error.code} {error.message}. Expected it to be accepted. "
            f"Check that project {args.project} has the Vertex AI API enabled, that you may create pipeline jobs "
            "there, and that --service-account exists."
        ) from None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job_file")
    parser.add_argument("--project", required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--schedule-file", default=None)
    parser.add_argument("--service-account", default=None)
    parser.add_argument("--endpoint", default=None)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    collected = _OneLineWarnings()
    logging.basicConfig(level=logging.WARNING, handlers=[collected])
    try:
        result = submit(args)
    except VertexError as error:
        print(json.dumps({"error": str(error), "warnings": collected.lines}))
        return 1
    print(json.dumps(dict(result, warnings=collected.lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
