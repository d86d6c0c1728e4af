"""The pipeline name and run id of the TFX execution that called `run_fn`, for Pushgateway grouping.

`run_fn` only receives `FnArgs`. TFX's launcher builds the executor with a
`BaseExecutor.Context` that holds the pipeline (`pipeline_info.id`) and the
run (`pipeline_run_id`: the local runner's run id, the orchestrator's run
elsewhere), and `GenericExecutor.Do` calls `run_fn` with that executor as
`self` on the stack. As in `model_artifact.py`, the caller's stack is read
(`compat.tfx.executor_stack`, TFX keeps the context private);
outside a TFX executor (tests, `python -m components.trainer.worker`) there
is no run and the labels are empty.

Example:
    >>> pipeline_run_labels()  # inside the Trainer of run "2026-11-23T10:00:00" of "taxi"
    {'pipeline': 'taxi', 'run_id': '2026-11-23T10:00:00'}
"""

from __future__ import annotations

from compat.tfx import executor_stack

__all__ = ["pipeline_run_labels"]


def pipeline_run_labels() -> dict[str, str]:
    """The calling TFX execution's `{"pipeline": ..., "run_id": ...}`.

    Returns:
        The labels found (a label is left out when TFX did not set it); {} outside a TFX executor.
    """
    context = executor_stack.executor_context()
    if context is None:
        return {}
    labels = {}
    if context.pipeline_info is not None and context.pipeline_info.id:
        labels["pipeline"] = context.pipeline_info.id
    if context.pipeline_run_id:
        labels["run_id"] = context.pipeline_run_id
    return labels
