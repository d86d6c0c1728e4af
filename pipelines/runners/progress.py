"""Progress a person can follow: one line per component, then a summary."""

from __future__ import annotations

import sys
from typing import Any, TextIO

__all__ = ["ProgressPrinter"]


class ProgressPrinter:
    """A hook that prints `[i/n] Component ... status  seconds` lines."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stdout
        self.width = 18

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def before_component(self, *, component_id: str, index: int, total: int, **_: Any) -> None:
        if self.stream.isatty():
            self.stream.write(f"[{index}/{total}] {component_id:<{self.width}} running...\r")
            self.stream.flush()

    def after_component(
        self, *, component_id: str, index: int, total: int, status: str, seconds: float, **_: Any
    ) -> None:
        self._print(f"[{index}/{total}] {component_id:<{self.width}} {status:<9} {seconds:6.1f}s")

    def on_retry(
        self, *, component_id: str, index: int, total: int, attempt: int, error: BaseException, **_: Any
    ) -> None:
        reason = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        self._print(
            f"[{index}/{total}] {component_id:<{self.width}} {'RETRYING':<9} attempt {attempt} failed: {reason}"
        )

    def on_failure(
        self, *, component_id: str, index: int, total: int, seconds: float, error: BaseException, **_: Any
    ) -> None:
        self._print(f"[{index}/{total}] {component_id:<{self.width}} {'FAILED':<9} {seconds:6.1f}s")
