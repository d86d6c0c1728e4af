"""Ctrl-C (SIGINT) and SIGTERM end a run the same clean way: one line, the report, exit 130 or 143.

SIGTERM is what `docker stop`, Kubernetes and most orchestrators send. Python's
default for it ends the process at once, with no line, no report and no
cleanup; `sigterm_interrupts` turns it into `Terminated`, a `KeyboardInterrupt`,
so TFX, Beam and TensorFlow let it through as they let Ctrl-C through and
the runner handles both in one place (`pipelines.runners.local`).

An interrupted component's execution stays RUNNING in ML Metadata, as after
a kill: the next run marks it failed and removes its partial outputs
(`pipelines.runners.recovery`), and what finished comes from TFX's cache.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["Terminated", "RunInterrupted", "sigterm_interrupts", "exit_code", "signal_name"]


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: raised in the main thread by `sigterm_interrupts`' handler."""


class RunInterrupted(KeyboardInterrupt):
    """The run stopped on Ctrl-C or SIGTERM; `component_id` was running (None: between components).

    Args:
        component_id: the component that was running, or None.
        error: the `KeyboardInterrupt` (or `Terminated`) that stopped it.
        log_file: the run's log.
    """

    def __init__(self, component_id: str | None, error: BaseException, log_file: str):
        self.component_id = component_id
        self.signal = signal_name(error)
        self.exit_code = exit_code(error)
        self.log_file = log_file
        where = f" at {component_id}" if component_id else ""
        super().__init__(f"the run was interrupted{where} ({self.signal})")


def signal_name(error: BaseException) -> str:
    """`SIGTERM` for a `Terminated` interrupt, `SIGINT` (Ctrl-C) for any other."""
    if isinstance(error, RunInterrupted):
        return error.signal
    return "SIGTERM" if isinstance(error, Terminated) else "SIGINT"


def exit_code(error: BaseException) -> int:
    """The shell's code for a process ended by the signal: 128 + its number (130 for SIGINT, 143 for SIGTERM)."""
    if isinstance(error, RunInterrupted):
        return error.exit_code
    return 128 + (signal.SIGTERM if isinstance(error, Terminated) else signal.SIGINT)


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` in the main thread; the previous handler comes back after it.

    Outside the main thread (where Python cannot set handlers) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
