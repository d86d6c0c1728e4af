"""Retries and time limits for one component run in this process.

Retries go through tenacity (`retrying`): `retries` more attempts after a
failure, waiting `backoff_seconds` before the first retry and twice as long
before each next one, up to `max_backoff_seconds`. Only an `Exception` is
retried: Ctrl-C (`KeyboardInterrupt`) and `SystemExit` end the component at once.

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
from collections.abc import Callable, Iterator, Mapping

import tenacity

__all__ = ["RetryPolicy", "ComponentTimeout", "time_limit", "policies_from_spec", "policy_for", "retrying"]


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
    """`retries` extra attempts after a failure; `timeout_seconds` per attempt (None: no limit).

    Between attempts the wait starts at `backoff_seconds` and doubles, capped at
    `max_backoff_seconds`; `backoff_seconds=0` retries at once.
    """

    retries: int = 0
    timeout_seconds: float | None = None
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 30.0


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


def retrying(policy: RetryPolicy, before_retry: Callable[..., None] | None = None) -> tenacity.Retrying:
    """A tenacity `Retrying` that runs a callable under `policy` and re-raises its last error.

    Args:
        policy: How many attempts (`retries + 1`) and how long to wait between them.
        before_retry: Called as `before_retry(attempt=..., error=...)` after a failed attempt that
            will be retried, before the wait.

    Returns:
        The `Retrying`: call it (`retrying(policy)(launch)` returns what `launch()` returns), or
        iterate it (`for attempt in retrying(policy): with attempt: ...`).

    Example:
        >>> retrying(RetryPolicy(retries=2, backoff_seconds=0))(lambda: "done")
        'done'
    """

    def before_sleep(state: tenacity.RetryCallState) -> None:
        if before_retry is not None:
            before_retry(attempt=state.attempt_number, error=state.outcome.exception())

    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.retries + 1),
        wait=tenacity.wait_exponential(multiplier=policy.backoff_seconds, max=policy.max_backoff_seconds),
        retry=tenacity.retry_if_exception_type(Exception),
        before_sleep=before_sleep,
        reraise=True,
    )
