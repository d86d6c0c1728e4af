"""The Python API, mirroring the YAML file: load, validate, compile, run.

Example:
    >>> import pipelines
    >>> spec = pipelines.load("pipelines/examples/chicago_taxi.yaml")
    >>> outcome = pipelines.run(spec)
    >>> outcome.summary.blessed
    True
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import sys
import time
from collections.abc import Sequence

from pipelines.runners import fingerprint
from pipelines.spec import ResolvedSpec, load_spec, parse_spec

__all__ = ["load", "validate", "compile", "run", "RunOutcome", "load_spec", "parse_spec"]

load = load_spec


def validate(path: str) -> ResolvedSpec:
    """Checks a spec file; raises SpecError listing every problem."""
    return load_spec(path)


def compile(resolved: ResolvedSpec, beam_args: Sequence[str] | None = None):  # noqa: A001 - mirrors the CLI verb
    """Returns the TFX pipeline object for a checked spec.

    Without `beam_args`, the Beam-powered components run as the local target
    runs them: on one thread for small data, on a thread per core for large
    data, the Evaluator on one (`pipelines.targets.beam.data_size_beam_args`).
    """
    from pipelines import compiler

    if not beam_args:
        from pipelines.targets.beam import data_size_beam_args

        beam_args = data_size_beam_args(resolved)
    return compiler.compile_pipeline(resolved, tuple(beam_args))


@dataclasses.dataclass
class RunOutcome:
    """What `run` did: `up_to_date` when nothing had changed since the last run."""

    up_to_date: bool
    seconds: float
    summary: object
    components: list = dataclasses.field(default_factory=list)
    log_file: str | None = None
    run_id: str | None = None


def run(
    resolved: ResolvedSpec,
    force: bool = False,
    hooks: Sequence[object] | None = None,
    stream=None,
    wait_seconds: float = 0.0,
) -> RunOutcome:
    """Runs the pipeline locally, unless nothing changed since the last run.

    One run at a time per pipeline root: the run holds `<root>/.run.lock`, and first cleans up
    what a killed run on this root left (see `pipelines.runners.recovery`).

    Args:
      resolved: a checked spec (from `load`).
      force: skip the up-to-date check and let TFX's cache decide per component.
      hooks: lifecycle hooks (see `pipelines.runners.hooks`), after the progress printer and the
        spec's own `hooks:`.
      stream: where progress and the summary go (default stdout).
      wait_seconds: how long to wait for another run on the same root to finish.

    Returns:
      What the run did.

    Raises:
      ComponentFailed: a component failed; finished artifacts stay published.
      RootBusy: another run holds the root after `wait_seconds`.
    """
    from pipelines.runners.lock import RunLock
    from pipelines.runners.recovery import recover_killed_run

    stream = stream or sys.stdout
    with RunLock(resolved.root, wait_seconds):
        recovered = recover_killed_run(resolved)
        if recovered:
            print(recovered.describe(), file=stream, flush=True)
        return _run_locked(resolved, force, hooks, stream)


def _run_locked(resolved: ResolvedSpec, force: bool, hooks: Sequence[object] | None, stream) -> RunOutcome:
    """`run`, once the root's lock is held."""
    started = time.perf_counter()
    current = fingerprint.run_fingerprint(resolved)
    record = fingerprint.read_record(resolved)
    if not force and fingerprint.is_up_to_date(resolved, record, current):
        from pipelines.runners.summary import RunSummary

        summary = RunSummary(**record.summary)
        seconds = time.perf_counter() - started
        print(
            f"Up to date: nothing changed since run {record.run_id}; no component needs to run "
            f"({seconds:.2f}s). Use --force to let TFX's cache re-check each component.",
            file=stream,
        )
        if summary.pushed_path:
            print(f"Serving: {summary.pushed_path}", file=stream)
        from pipelines.report.paths import report_path

        report = report_path(resolved.root, record.run_id)
        if os.path.isfile(report):
            print(f"Report: {report}", file=stream)
        return RunOutcome(True, seconds, summary, run_id=record.run_id)

    from pipelines.history.records import read_inputs
    from pipelines.runners.local import run_pipeline
    from pipelines.runners.progress import ProgressPrinter
    from pipelines.targets.beam import ONE_THREAD_COMPONENTS, data_size_beam_args, worker_threads

    inputs = read_inputs(resolved)  # the spec text and data files this run reads, for its record
    beam_args = data_size_beam_args(resolved)
    threads = worker_threads(beam_args) if resolved.spec.orchestrator.beam is None else 0  # Dask: its own line
    print(
        f"Pipeline {resolved.name}: {len(resolved.data_files)} data file(s), root {resolved.root}"
        + (f"; Beam on {threads} threads (large data; {', '.join(ONE_THREAD_COMPONENTS)} on one)" if threads else ""),
        file=stream,
        flush=True,
    )
    tfx_pipeline = compile(resolved, beam_args)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    log_file = os.path.join(resolved.log_dir, f"run-{stamp}.log")
    from pipelines.runners.retry import policies_from_spec
    from pipelines.runners.spec_hooks import build_hooks
    from pipelines.targets.resources import unhonoured_settings

    for warning in unhonoured_settings(resolved.spec.orchestrator, "local"):
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    from pipelines.runners.memory_check import memory_warnings

    for warning in memory_warnings(resolved, [node.id for node in tfx_pipeline.components]):
        print(f"warning: {warning}", file=sys.stderr, flush=True)

    spec_hooks = build_hooks(resolved.spec)  # `hooks:` in the spec, before those given here
    from pipelines.report import RunReporter

    reporter = RunReporter(resolved, tfx_pipeline, log_file, stream)  # a failed run's report is written by the hook
    from pipelines.runners.console import echoing

    try:
        with echoing(stream=stream):  # e.g. the Trainer's memory estimate, as it starts
            result = run_pipeline(
                tfx_pipeline,
                log_file,
                hooks=[ProgressPrinter(stream), *spec_hooks, *(hooks or []), reporter],
                policies=policies_from_spec(resolved.spec.orchestrator),
            )
    finally:
        for hook in spec_hooks:
            getattr(hook, "close", lambda: None)()
    from pipelines.runners.run_end import finish_run

    seconds = time.perf_counter() - started
    connection = tfx_pipeline.metadata_connection_config
    summary = finish_run(
        resolved, result.run_id, connection, result.components, reporter, current, seconds, log_file, stream, inputs
    )
    return RunOutcome(False, seconds, summary, result.components, log_file, result.run_id)
