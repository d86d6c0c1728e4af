"""Run history: every run of a pipeline root from ML Metadata and the run records, one run in detail, two compared.

Example:
    >>> from pipelines.history import list_runs, diff_runs
    >>> runs = list_runs("runs/chicago_taxi")
    >>> diff_runs(runs[1], runs[0]).reran
    ['Trainer', 'BaselineResolver', 'Evaluator', 'Pusher']
"""

from pipelines.history.diff import RunDiff, diff_runs
from pipelines.history.lineage import Lineage, run_lineage
from pipelines.history.mlmd_runs import RootError, RunInfo, list_runs
from pipelines.history.records import RunRecord, save_run
from pipelines.history.select import RunNotFound, select_run

__all__ = [
    "RunDiff",
    "diff_runs",
    "Lineage",
    "run_lineage",
    "RootError",
    "RunInfo",
    "list_runs",
    "RunRecord",
    "save_run",
    "RunNotFound",
    "select_run",
]
