"""The running TFX executor's output artifacts and context, read from the call stack of `run_fn`.

`output_artifacts` (entry `compat.tfx.executor_stack.output_dict`)
    What: walks the caller's frames to the nearest local `output_dict` (the argument of
    `GenericExecutor.Do`, which calls `run_fn`) and returns its artifacts under a key.
    Why: `run_fn` only receives `FnArgs`, not the output artifacts, and TFX publishes the
    artifacts of that `output_dict` (custom properties included) once `Do` returns; TFX has
    no public way to reach them from `run_fn`.
    Shape check: `GenericExecutor.Do` takes `output_dict`; otherwise nothing is found
    (one log line) and callers set nothing, as outside an executor.

`executor_context` (entry `compat.tfx.executor_stack.context`)
    What: walks the caller's frames to the nearest `self` that is a TFX `BaseExecutor` and
    returns its private `_context` (pipeline info and run id).
    Why: `run_fn` only receives `FnArgs`; the executor keeps its context private, with no
    public accessor.
    Shape check: `BaseExecutor.__init__` takes `context` and sets `_context`; otherwise
    None (one log line), as outside an executor.

Pinned: tfx `compat.tfx.PINNED`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import compat

__all__ = ["output_artifacts", "executor_context", "output_dict_shape_problem", "context_shape_problem"]

OUTPUT_DICT_ENTRY = "compat.tfx.executor_stack.output_dict"
CONTEXT_ENTRY = "compat.tfx.executor_stack.context"


def output_dict_shape_problem() -> str | None:
    """None when `GenericExecutor.Do` has the `output_dict` local looked for here, else what differs."""
    from tfx.components.trainer.executor import GenericExecutor

    if "output_dict" not in inspect.signature(GenericExecutor.Do).parameters:
        return "GenericExecutor.Do takes no `output_dict`"
    return None


def output_artifacts(key: str) -> list[Any]:
    """The artifacts under `key` of each calling frame's `output_dict` mapping, nearest first ([] when none)."""
    if not compat.check_shape(OUTPUT_DICT_ENTRY, output_dict_shape_problem):
        return []
    found = []
    frame = inspect.currentframe()
    try:
        while frame is not None:
            output_dict = frame.f_locals.get("output_dict")
            if isinstance(output_dict, Mapping):
                found.extend(output_dict.get(key, []))
            frame = frame.f_back
    finally:
        del frame
    return found


def context_shape_problem() -> str | None:
    """None when a TFX executor keeps its context in `_context`, else what differs."""
    from tfx.dsl.components.base.base_executor import BaseExecutor

    if "context" not in inspect.signature(BaseExecutor.__init__).parameters:
        return "BaseExecutor.__init__ takes no `context`"
    if "_context" not in BaseExecutor.__init__.__code__.co_names:
        return "BaseExecutor.__init__ no longer sets `_context`"
    return None


def executor_context():
    """The `BaseExecutor.Context` of the nearest calling TFX executor, or None (none on the stack, or none set)."""
    if not compat.check_shape(CONTEXT_ENTRY, context_shape_problem):
        return None
    from tfx.dsl.components.base.base_executor import BaseExecutor

    frame = inspect.currentframe()
    try:
        while frame is not None:
            executor = frame.f_locals.get("self")
            if isinstance(executor, BaseExecutor):
                return getattr(executor, "_context", None)
            frame = frame.f_back
    finally:
        del frame
    return None
