"""Writes a run's HTML report: a run hook that records what ran, then one call once the summary exists.

A failed or interrupted run gets its report from the hook (`after_run`), with whatever the
finished components wrote; a run that succeeded gets it from `write`, after `summarize`. Neither
ever fails the run: a problem is logged as one warning line and the run goes on.

Example:
    >>> reporter = RunReporter(resolved, tfx_pipeline, log_file, stream)
    >>> result = run_pipeline(tfx_pipeline, log_file, hooks=[..., reporter])
    >>> path = reporter.write(summarize(connection, result.components))
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any, TextIO

from pipelines.outcome.results import ComponentResult
from pipelines.report.collect import RunFacts, collect, pipeline_graph
from pipelines.report.paths import report_path
from pipelines.report.render import render, write_atomically

__all__ = ["RunReporter", "write_report"]

logger = logging.getLogger(__name__)


def write_report(resolved, connection_config, run, summary=None) -> str | None:
    """Collects, renders and writes the report of one run; never raises.

    Args:
        resolved: the run's `ResolvedSpec`.
        connection_config: the ML Metadata connection config.
        run: a `pipelines.report.collect.RunFacts`.
        summary: the `RunSummary`, when the run made one.

    Returns:
        The report's path, or None when it could not be written (a warning says why).
    """
    path = report_path(resolved.root, run.run_id)
    try:
        started = time.perf_counter()
        write_atomically(path, render(collect(resolved, connection_config, run, summary)))
        logger.info("Wrote the run report %s in %.2fs.", path, time.perf_counter() - started)
        return path
    except Exception as error:  # noqa: BLE001 - the report must never fail the run
        logger.warning("Could not write the run report %s: %s: %s", path, type(error).__name__, error, exc_info=True)
        print(f"warning: could not write the run report ({type(error).__name__}: {error})", file=sys.stderr)
        return None


class RunReporter:
    """A run hook (see `pipelines.hooks.phases`) that keeps what the report needs about the run.

    Args:
        resolved: the run's `ResolvedSpec`.
        tfx_pipeline: the compiled pipeline (its components' dependencies draw the DAG).
        log_file: the run's log file.
        stream: where a failed run's `Report: <path>` line goes (default stdout).
    """

    def __init__(self, resolved, tfx_pipeline, log_file: str = "", stream: TextIO | None = None):

        self.resolved = resolved
        self.connection_config = tfx_pipeline.metadata_connection_config
        self.order, self.upstream = pipeline_graph(tfx_pipeline)
        self.stream = stream or sys.stdout
        self.run_id: str | None = None
        self.results: list = []
        self.failed: tuple[str, float, str] | None = None
        self.interrupted: tuple[str | None, float, str] | None = None
        self.status = "running"
        self.seconds = 0.0
        self.log_file = log_file

    def before_run(self, *, run_id: str, **_: Any) -> None:
        self.run_id = run_id

    def after_component(
        self, *, component_id: str, status: str, seconds: float, execution_id: int | None, **_: Any
    ) -> None:
        self.results.append(ComponentResult(component_id, status, seconds, execution_id))

    def on_failure(self, *, component_id: str, seconds: float, error: BaseException, **_: Any) -> None:
        self.failed = (component_id, seconds, str(error) or type(error).__name__)

    def on_interrupt(self, *, component_id: str | None, seconds: float, signal: str, **_: Any) -> None:
        self.interrupted = (component_id, seconds, signal)

    def after_run(self, *, status: str, seconds: float, **_: Any) -> None:
        self.status, self.seconds = status, seconds
        if status != "succeeded":
            path = self._write(None)
            if path:
                print(f"Report: {path}", file=self.stream, flush=True)

    def write(self, summary) -> str | None:
        """Writes the report of the finished run with its summary; returns its path, or None (a warning said why)."""
        return self._write(summary)

    def _write(self, summary) -> str | None:

        if self.run_id is None:
            return None
        facts = RunFacts(
            self.run_id,
            self.status,
            self.seconds,
            self.log_file,
            self.order,
            self.upstream,
            self.results,
            self.failed,
            self.interrupted,
        )
        return write_report(self.resolved, self.connection_config, facts, summary)
