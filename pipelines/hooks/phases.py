"""Lifecycle hooks: called before and after each component, and on failure.

Hooks take keyword arguments only, grouped by phase, so new arguments can
be added without breaking existing hooks:

- `before_run(pipeline_name, run_id)`
- `before_component(component_id, index, total)`
- `after_component(component_id, index, total, status, seconds, execution_id)`
  where status is `executed` or `cached`
- `on_failure(component_id, index, total, seconds, error)`
- `on_retry(component_id, index, total, attempt, error)`: attempt `attempt` failed
  and the component runs again (`orchestrator.components.<id>.retries`)
- `on_interrupt(component_id, seconds, signal)`: Ctrl-C (`SIGINT`) or `SIGTERM` stopped
  the run while `component_id` ran (None: between components); no `on_failure` follows
- `after_run(pipeline_name, run_id, status, seconds)`, status `succeeded`, `failed` or
  `interrupted`
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["RunHooks", "HookList"]


class RunHooks(Protocol):
    def before_component(self, **kwargs: Any) -> None: ...

    def after_component(self, **kwargs: Any) -> None: ...

    def on_failure(self, **kwargs: Any) -> None: ...

    def after_run(self, **kwargs: Any) -> None: ...


class HookList:
    """Calls each hook that defines the phase, in order."""

    def __init__(self, hooks: Sequence[object] = ()):
        self.hooks = list(hooks)

    def call(self, phase: str, **kwargs: Any) -> None:
        for hook in self.hooks:
            method = getattr(hook, phase, None)
            if method is not None:
                method(**kwargs)
