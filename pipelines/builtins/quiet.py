"""Log lines dropped while a factory builds its component: known library noise nobody reading a run can act on.

TFX's Pusher logs "`custom_executor_spec` is deprecated" whenever it is given
an executor, as the Pusher built-in does on purpose (the atomic pusher). The
filter drops exactly that message, only while it is installed, and nothing else.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

__all__ = ["MessageFilter", "dropping", "CUSTOM_EXECUTOR_SPEC_DEPRECATED"]

CUSTOM_EXECUTOR_SPEC_DEPRECATED = "`custom_executor_spec` is deprecated"


class MessageFilter(logging.Filter):
    """Drops log records whose message starts with one of `prefixes`."""

    def __init__(self, *prefixes: str):
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefixes)


@contextlib.contextmanager
def dropping(*prefixes: str, loggers: tuple[str, ...] = ("absl", "")) -> Iterator[MessageFilter]:
    """Drops log records starting with `prefixes` from `loggers` inside the `with` block.

    Args:
        prefixes: message starts to drop.
        loggers: logger names ("" is the root logger; absl's `logging.warning` goes to `absl`).

    Yields:
        The installed filter.
    """
    message_filter = MessageFilter(*prefixes)
    targets = [logging.getLogger(name) if name else logging.getLogger() for name in loggers]
    for logger in targets:
        logger.addFilter(message_filter)
    try:
        yield message_filter
    finally:
        for logger in targets:
            logger.removeFilter(message_filter)
