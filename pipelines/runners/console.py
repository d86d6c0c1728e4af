"""Which library log lines reach the console: known noise dropped, a few messages a person needs echoed.

TFX's Pusher logs "`custom_executor_spec` is deprecated" whenever it is given
an executor, as our compiler does on purpose (the atomic pusher); a person
reading the run can do nothing about it. The filter drops exactly that
message, only while it is installed, and nothing else.

Component logs go to the run's log file, not the console. A message a person
must see while the run goes on (the Trainer's accelerator memory estimate,
logged before training starts: the usual out-of-memory trap) is echoed to the
console as well, by its prefix, while `echoing` is installed.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import TextIO

# The filter itself lives with the built-ins, whose Pusher factory drops TFX's deprecation line while it builds.
from pipelines.builtins.quiet import CUSTOM_EXECUTOR_SPEC_DEPRECATED, MessageFilter, dropping

__all__ = ["MessageFilter", "dropping", "echoing", "CUSTOM_EXECUTOR_SPEC_DEPRECATED", "ECHOED_PREFIXES"]

# `components.trainer.devices.accelerator_memory.log_estimate`: memory per step, and the batch that fits.
ECHOED_PREFIXES = ("Trainer: about ",)


class _EchoHandler(logging.Handler):
    """Writes the messages of records that start with `prefixes` to `stream`, one line each."""

    def __init__(self, prefixes: tuple[str, ...], stream: TextIO):
        super().__init__(logging.INFO)
        self.prefixes = prefixes
        self.stream = stream

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith(self.prefixes):
            label = "warning: " if record.levelno >= logging.WARNING else ""
            print(f"{label}{message}", file=self.stream, flush=True)


@contextlib.contextmanager
def echoing(prefixes: tuple[str, ...] = ECHOED_PREFIXES, stream: TextIO | None = None) -> Iterator[None]:
    """Echoes absl log messages starting with `prefixes` to `stream` (default stdout) inside the `with` block.

    They still reach the run's log file as before; a warning is printed after `warning: `.
    """
    handler = _EchoHandler(prefixes, stream or sys.stdout)
    logger = logging.getLogger("absl")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
