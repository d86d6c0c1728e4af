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

from pipelines import compiler
from pipelines.beam.dask import check_scheduler_of
from pipelines.history.records import read_inputs
from pipelines.load import load_spec, parse_spec
from pipelines.outcome import fingerprint
from pipelines.outcome.summary import RunSummary
from pipelines.report import RunReporter
from pipelines.report.paths import report_path
from pipelines.resources.memory_check import memory_warnings
from pipelines.runners import spans as span_runs
from pipelines.runners.console import echoing
from pipelines.runners.local import run_pipeline
from pipelines.runners.lock import RunLock
from pipelines.runners.progress import ProgressPrinter
from pipelines.runners.recovery import recover_killed_run
from pipelines.runners.retry import policies_from_spec
from pipelines.runners.run_end import finish_run
from pipelines.spec import ResolvedSpec
from pipelines.steps.spec_hooks import build_hooks
from pipelines.targets.beam import ONE_THREAD_COMPONENTS, data_size_beam_args, worker_threads
from pipelines.targets.resources import unhonoured_settings

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

    if not beam_args:
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
    span: int | None = None,
) -> RunOutcome:
    """Runs the pipeline locally, unless nothing changed since the last run.

    One run at a time per pipeline root: the run holds `<root>/.run.lock`, and first cleans up
    what a killed run on this root left (see `pipelines.runners.recovery`).

    Args:
      resolved: a checked spec (from `load`).
      force: skip the up-to-date check and let TFX's cache decide per component.
      hooks: lifecycle hooks (see `pipelines.hooks.phases`), after the progress printer and the
        spec's own `hooks:`.
      stream: where progress and the summary go (default stdout).
      wait_seconds: how long to wait for another run on the same root to finish.
      span: with spans in `data.path` (or `data.sql`), ingest (backfill) this span, whether ingested before
        or not; a query's span is queried again first.

    Returns:
      What the run did.

    Raises:
      ComponentFailed: a component failed; finished artifacts stay published.
      RootBusy: another run holds the root after `wait_seconds`.
      SpanNotFound: `span` is not a span `data.path` matches (or `data.spans_sql` lists).
      SqlProblem: `span`'s query failed (a spec with `{SPAN}` in `data.sql`).
    """

    stream = stream or sys.stdout
    with RunLock(resolved.root, wait_seconds):
        recovered = recover_killed_run(resolved)
        if recovered:
            print(recovered.describe(), file=stream, flush=True)
        started = time.perf_counter()
        if resolved.spans:
            resolved = _ingest_spans(resolved, span, stream)
            if resolved.ingest_span is None:  # a backfill of an older span: nothing to train on
                return RunOutcome(False, time.perf_counter() - started, None)
        return _run_locked(resolved, force, hooks, stream, started)


def _ingest_spans(resolved: ResolvedSpec, span: int | None, stream) -> ResolvedSpec:
    """Ingests the spans the run does not train on (ExampleGen, StatisticsGen); returns the spec for the
    span it trains on (`ingest_span`; None after a backfill of an older span)."""

    plan = span_runs.plan_spans(resolved, span_runs.ingested_spans(resolved), span)
    if span is not None:
        span_runs.export_backfilled_span(resolved, span)  # `{SPAN}` in `data.sql`: span N's rows, queried again
    read = False
    if plan.ingest_only:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        log_file = os.path.join(resolved.log_dir, f"ingest-{stamp}.log")
        for older in plan.ingest_only:
            one_span = dataclasses.replace(resolved, data_files=older.files)
            read = span_runs.ingest_only(resolved, older, tuple(data_size_beam_args(one_span)), log_file, stream)
    if plan.train is None:
        done = "later windows read it" if read else "its files are unchanged since it was ingested (cached)"
        print(f"Backfilled {plan.new[0].describe()}: {done}.", file=stream, flush=True)
        return dataclasses.replace(resolved, ingest_span=None)
    return dataclasses.replace(resolved, ingest_span=plan.train.number, data_files=plan.train.files)


def _run_locked(
    resolved: ResolvedSpec, force: bool, hooks: Sequence[object] | None, stream, started: float
) -> RunOutcome:
    """`run`, once the root's lock is held (and, with spans, the spans it does not train on are ingested)."""
    current = fingerprint.run_fingerprint(resolved)
    record = fingerprint.read_record(resolved)
    if not force and fingerprint.is_up_to_date(resolved, record, current):
        summary = RunSummary(**record.summary)
        seconds = time.perf_counter() - started
        if resolved.spans:
            newest = resolved.spans[-1]
            print(
                f"No new span to train on since run {record.run_id}: the newest, {newest.describe()}, is ingested; "
                "nothing to do.",
                file=stream,
            )
            return RunOutcome(True, seconds, summary, run_id=record.run_id)
        print(
            f"Up to date: nothing changed since run {record.run_id}; no component needs to run "
            f"({seconds:.2f}s). Use --force to let TFX's cache re-check each component.",
            file=stream,
        )
        if summary.pushed_path:
            print(f"Serving: {summary.pushed_path}", file=stream)

        report = report_path(resolved.root, record.run_id)
        if os.path.isfile(report):
            print(f"Report: {report}", file=stream)
        return RunOutcome(True, seconds, summary, run_id=record.run_id)

    inputs = read_inputs(resolved)  # the spec text and data files this run reads, for its record
    beam_args = data_size_beam_args(resolved)
    threads = worker_threads(beam_args) if resolved.spec.orchestrator.beam is None else 0  # Dask: its own line
    trained_span = f"; {resolved.spans[-1].describe()}" if resolved.spans else ""
    print(
        f"Pipeline {resolved.name}: {len(resolved.data_files)} data file(s){trained_span}, root {resolved.root}"
        + (f"; Beam on {threads} threads (large data; {', '.join(ONE_THREAD_COMPONENTS)} on one)" if threads else ""),
        file=stream,
        flush=True,
    )
    check_scheduler_of(resolved.spec.orchestrator)
    tfx_pipeline = compile(resolved, beam_args)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    log_file = os.path.join(resolved.log_dir, f"run-{stamp}.log")

    for warning in unhonoured_settings(resolved.spec.orchestrator, "local"):
        print(f"warning: {warning}", file=sys.stderr, flush=True)

    for warning in memory_warnings(resolved, [node.id for node in tfx_pipeline.components]):
        print(f"warning: {warning}", file=sys.stderr, flush=True)

    spec_hooks = build_hooks(resolved.spec)  # `hooks:` in the spec, before those given here

    reporter = RunReporter(resolved, tfx_pipeline, log_file, stream)  # a failed run's report is written by the hook

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

    seconds = time.perf_counter() - started
    connection = tfx_pipeline.metadata_connection_config
    summary = finish_run(
        resolved, result.run_id, connection, result.components, reporter, current, seconds, log_file, stream, inputs
    )
    return RunOutcome(False, seconds, summary, result.components, log_file, result.run_id)
