"""What each page of the UI shows, gathered from ML Metadata and the run records (no HTML here).

Each function returns the template's variables; an unknown run raises `RunNotFound`.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from pipelines.history import format as text
from pipelines.history.diff import diff_runs
from pipelines.history.lineage import run_lineage
from pipelines.history.mlmd_runs import RunInfo, fill_summary, list_runs
from pipelines.history.select import select_run
from pipelines.report.paths import report_path
from pipelines.report.slices import slices_view
from pipelines.spec import SpecError, typed_spec

__all__ = ["RunSource"]


class RunSource:
    """The runs of one root, with the summaries of record-less runs (read by TFMA: slow) kept once read.

    Args:
        root: the pipeline root.
    """

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._summaries: dict[str, dict] = {}
        self._lock = threading.Lock()

    def runs(self, with_summaries: bool = True) -> list[RunInfo]:
        """Every run, newest first; finished runs' summaries are read once and kept."""
        runs = list_runs(self.root, with_summaries=False)
        for run in runs if with_summaries else []:
            self._summary(run)
        return runs

    def _summary(self, run: RunInfo) -> RunInfo:
        with self._lock:
            if run.run_id in self._summaries:
                run.summary = self._summaries[run.run_id]
                return run
        fill_summary(self.root, run)
        if run.status == "succeeded":
            with self._lock:
                self._summaries[run.run_id] = run.summary
        return run

    def find(self, wanted: str) -> tuple[RunInfo, list[RunInfo]]:
        """(The run `wanted` names, all runs).

        Raises:
            RunNotFound: no run, or several, match `wanted`.
        """
        runs = self.runs(with_summaries=False)
        run_id = select_run([run.run_id for run in runs], wanted)
        return self._summary(next(run for run in runs if run.run_id == run_id)), runs

    def report_url(self, run_id: str) -> str | None:
        """`/files/reports/<run>.html` when the run's HTML report exists, else None."""
        path = report_path(self.root, run_id)
        return "/files/" + os.path.relpath(path, self.root).replace(os.sep, "/") if os.path.isfile(path) else None

    def runs_page(self) -> dict[str, Any]:
        """The runs table."""
        runs = self.runs()
        rows = [
            {
                "run": run,
                "components": text.components_text(run),
                "blessed": text.blessing_text(run.summary),
                "report": self.report_url(run.run_id),
            }
            for run in runs
        ]
        return {"root": self.root, "rows": rows, "run_ids": [run.run_id for run in runs]}

    def run_page(self, wanted: str) -> dict[str, Any]:
        """One run: components, artifacts, metrics, blessing, pushed version, report link."""
        run, _ = self.find(wanted)
        return {
            "root": self.root,
            "run": run,
            "summary": run.summary,
            "blessed": text.blessing_text(run.summary),
            "report": self.report_url(run.run_id),
            "serving_version": (run.summary.get("deployed") or {}).get("version"),
        }

    def lineage_page(self, wanted: str) -> dict[str, Any]:
        """Which data, spec and code made the run's model, and where it was pushed and served."""
        run, _ = self.find(wanted)
        return {"root": self.root, "run": run, "lineage": run_lineage(self.root, run)}

    def slices_page(self, wanted: str) -> dict[str, Any]:
        """The run's metrics per slice (the report's slices page): sortable table, bars, bounds, fairness gaps."""
        run, _ = self.find(wanted)
        summary = run.summary or {}
        view = slices_view(summary.get("slices") or [], _thresholds(run), summary.get("fairness") or [])
        return {"root": self.root, "run": run, "view": view}

    def compare_page(self, wanted_a: str, wanted_b: str) -> dict[str, Any]:
        """Two runs side by side, with `runs diff`'s comparison."""
        run_a, runs = self.find(wanted_a)
        run_b, _ = self.find(wanted_b)
        return {
            "root": self.root,
            "a": run_a,
            "b": run_b,
            "diff": diff_runs(run_a, run_b),
            "run_ids": [run.run_id for run in runs],
            "blessed": (text.blessing_text(run_a.summary), text.blessing_text(run_b.summary)),
        }


def _thresholds(run: RunInfo) -> dict:
    """The run's `evaluation.thresholds` from its recorded spec text (the bounds the slices page draws); {} without."""
    if run.record is None:
        return {}
    try:
        spec, _ = typed_spec(run.record.spec_text, run.record.spec_file)
    except SpecError:  # a record from an older spec format: the page shows the values without bounds
        return {}
    return dict(spec.evaluation.thresholds)
