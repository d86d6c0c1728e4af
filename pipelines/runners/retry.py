"""Retries and time limits for one component run in this process.

A time limit is enforced with SIGALRM, so it works in the main thread of the
process (where `python -m pipelines run` runs components): the component gets
a `ComponentTimeout` raised inside it when its time is up. Elsewhere (a
worker thread) the limit cannot be enforced and a warning says so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import signal
import threading
from collections.abc import Iterator, Mapping

__all__ = ["RetryPolicy", "ComponentTimeout", "time_limit", "policies_from_spec", "policy_for"]


class ComponentTimeout(TimeoutError):
    """A component ran past its `timeout_seconds`."""

    def __init__(self, component_id: str, seconds: float):
        self.component_id = component_id
        self.seconds = seconds
        super().__init__(
            f"{component_id} ran longer than its time limit. Expected at most {seconds:g}s. "
            f"Received: still running after {seconds:g}s. Raise `orchestrator.components.{component_id}"
            ".timeout_seconds`, or make the step faster."
        )


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """`retries` extra attempts after a failure; `timeout_seconds` per attempt (None: no limit)."""

    retries: int = 0
    timeout_seconds: float | None = None


def policies_from_spec(orchestrator) -> dict[str, RetryPolicy]:
    """The retry policies an `OrchestratorSpec` declares, by component id."""
    return {
        component_id: RetryPolicy(settings.retries, settings.timeout_seconds)
        for component_id, settings in orchestrator.components.items()
        if settings is not None and (settings.retries or settings.timeout_seconds)
    }


@contextlib.contextmanager
def time_limit(component_id: str, seconds: float | None) -> Iterator[None]:
    """Raises `ComponentTimeout` inside the block when it runs past `seconds`."""
    if not seconds:
        yield
        return
    if threading.current_thread() is not threading.main_thread():
        logging.warning("%s: timeout_seconds=%s is not enforced outside the main thread.", component_id, seconds)
        yield
        return

    def expire(signum, frame):
        raise ComponentTimeout(component_id, seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def policy_for(policies: Mapping[str, RetryPolicy] | None, component_id: str) -> RetryPolicy:
    return (policies or {}).get(component_id) or RetryPolicy()
