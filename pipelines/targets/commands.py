"""The command-line side of targets: `compile --target T`, `run --target beam` and `submit --target kubeflow`."""

from __future__ import annotations

import argparse
import os
import sys

from pipelines.load import load_spec
from pipelines.outcome.metadata_file import MetadataUnreadable
from pipelines.runners.local import ComponentFailed
from pipelines.spec.orchestrator import TARGETS
from pipelines.targets import compile_target
from pipelines.targets.airflow_register import register_dag
from pipelines.targets.beam import run_beam
from pipelines.targets.kubeflow import KubeflowRootError
from pipelines.targets.submit import SubmitError, submit_kubeflow
from pipelines.targets.vertex_submit import submit_vertex

__all__ = ["add_compile_command", "add_submit_command", "add_target_option", "run_on_target", "RUNNABLE_TARGETS"]

RUNNABLE_TARGETS = ("local", "beam")


def add_target_option(run_parser: argparse.ArgumentParser) -> None:
    run_parser.add_argument(
        "--target",
        choices=RUNNABLE_TARGETS,
        default=None,
        help="where to run: local (this process) or beam (TFX's BeamDagRunner); default: the spec's orchestrator.target",
    )


def run_on_target(resolved, target: str) -> int:
    """Runs `resolved` on a non-local target; returns the exit code."""
    if target not in RUNNABLE_TARGETS:
        print(
            f"error: the {target} target is not run from here. Expected one of: {', '.join(RUNNABLE_TARGETS)}. "
            f"Received: orchestrator.target={target}. Compile it with `python -m pipelines compile "
            f"{resolved.spec_file} --target {target}` and submit the artefact, or pass `--target local`.",
            file=sys.stderr,
        )
        return 2

    try:
        states = run_beam(resolved)
    except MetadataUnreadable as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except ComponentFailed as error:  # worded as the local target words it
        cause = str(error.__cause__).strip() or type(error.__cause__).__name__
        print(f"error: Run failed at {error.component_id}: {cause}\nFull log: {error.log_file}", file=sys.stderr)
        return 1
    except RuntimeError as error:
        print(f"\nRun failed: {error}", file=sys.stderr)
        return 1
    failed = [c for c, state in states.items() if state == "FAILED"]
    return 1 if failed else 0


def _cmd_compile(args) -> int:

    resolved = load_spec(args.spec, target=args.target)  # every check is for the target being compiled

    try:
        compiled = compile_target(resolved, args.target, args.output)
    except ImportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (KubeflowRootError, ValueError) as error:
        print(f"error: {resolved.spec_file}: {error}", file=sys.stderr)
        return 2
    for warning in compiled.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"Compiled {resolved.name} for {compiled.target}:")
    for path in compiled.files:
        print(f"  {path}")
    if compiled.target == "airflow":
        print("\n".join(register_dag(compiled.files[0], resolved.name).lines))
    return 0


def add_compile_command(commands) -> None:
    compile_parser = commands.add_parser("compile", help="write a target's artefact: pipeline JSON, DAG file, IR")
    compile_parser.add_argument("spec", help="the pipeline YAML file")
    compile_parser.add_argument(
        "--target", choices=TARGETS, default=None, help="default: the spec's orchestrator.target"
    )
    compile_parser.add_argument(
        "--output", default=None, help="folder to write into (default: <root>/compiled/<target>)"
    )
    compile_parser.set_defaults(handler=_cmd_compile)


_SUBMIT_NEEDS = {
    "kubeflow": (("host",), "--host http://127.0.0.1:8080"),
    "vertex": (("project", "region"), "--project my-project --region us-central1"),
}


def _cmd_submit(args) -> int:

    needed, example = _SUBMIT_NEEDS[args.target]
    missing = [f"--{name.replace('_', '-')}" for name in needed if not getattr(args, name)]
    if missing:
        print(
            f"error: submit --target {args.target} needs {' and '.join(missing)}. Expected e.g. {example}. "
            f"Received none. Add {' '.join(missing)}.",
            file=sys.stderr,
        )
        return 2
    try:
        if args.target == "vertex":
            submission = submit_vertex(
                args.compiled,
                args.project,
                args.region,
                schedule=args.schedule,
                service_account=args.service_account,
                endpoint=args.endpoint,
            )
        else:
            submission = submit_kubeflow(
                args.compiled,
                args.host,
                experiment=args.experiment,
                upload=args.upload,
                schedule=args.schedule,
                namespace=args.namespace,
                token=args.token,
            )
    except SubmitError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for warning in getattr(submission, "warnings", ()):
        print(f"warning: {warning}", file=sys.stderr)
    where = args.host if args.target == "kubeflow" else f"Vertex AI ({args.project}, {args.region})"
    print(f"Submitted {args.compiled} to {where}:")
    for link in submission.links():
        print(f"  {link}")
    return 0


def add_submit_command(commands) -> None:
    submit_parser = commands.add_parser(
        "submit",
        help="send a compiled pipeline to Kubeflow Pipelines (upload, run, schedule) or Vertex AI (run, schedule)",
    )
    submit_parser.add_argument("compiled", help="the `compile --target kubeflow` output folder, or its package file")
    submit_parser.add_argument("--target", choices=("kubeflow", "vertex"), default="kubeflow", help="where to submit")
    submit_parser.add_argument("--host", default=None, help="kubeflow: the KFP API URL, e.g. http://127.0.0.1:8080")
    submit_parser.add_argument("--experiment", default="Default", help="experiment of the run (found or created)")
    submit_parser.add_argument("--upload", action="store_true", help="upload as a pipeline (or a new version)")
    submit_parser.add_argument(
        "--schedule",
        action="store_true",
        help="create the schedule (recurring_run.json, vertex_schedule.json) instead of one run",
    )
    submit_parser.add_argument("--namespace", default=None, help="multi-user KFP: the profile namespace")
    submit_parser.add_argument(
        "--token", default=os.environ.get("KFP_TOKEN"), help="bearer token (default: $KFP_TOKEN)"
    )
    submit_parser.add_argument("--project", default=None, help="vertex: the Google Cloud project")
    submit_parser.add_argument("--region", default=None, help="vertex: the region, e.g. us-central1")
    submit_parser.add_argument("--service-account", default=None, help="vertex: the service account runs act as")
    submit_parser.add_argument(
        "--endpoint", default=None, help="vertex: another API endpoint (an http:// one is called without credentials)"
    )
    submit_parser.set_defaults(handler=_cmd_submit)
