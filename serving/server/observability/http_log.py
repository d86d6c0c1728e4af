"""The REST server's log of connection errors: a malformed request is one line.

aiohttp logs a request it cannot parse (a bad header, a broken
Content-Length) with `logger.exception`: a full traceback on the console for
every malformed request any client sends, though the client was already
answered 400. `ConnectionErrorLog`, passed as aiohttp's documented `logger`
option of its low-level server, writes one INFO line for those (the
traceback at DEBUG) and keeps the traceback for everything else (a failure in
the server's own code).
"""

from __future__ import annotations

import logging
import sys

from aiohttp.http import HttpProcessingError

__all__ = ["ConnectionErrorLog"]


class ConnectionErrorLog(logging.LoggerAdapter):
    """The `logger` of aiohttp's RequestHandler (it calls `debug` and `exception`).

    Args:
        logger: Where the lines go.
    """

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__(logger, {})

    def exception(self, msg, *args, exc_info=True, **kwargs) -> None:
        error = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1]
        if not isinstance(error, HttpProcessingError):
            self.logger.error(msg, *args, exc_info=exc_info, **kwargs)
            return
        reason = (error.message or "").strip().splitlines()[0:1] or [type(error).__name__]
        self.logger.info(
            "%s: malformed HTTP request, answered %s (%s); details at DEBUG level",
            msg % args if args else msg,
            error.code,
            reason[0].rstrip(":"),
        )
        self.logger.debug(msg, *args, exc_info=error, **kwargs)
