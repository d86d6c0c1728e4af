"""`ComponentResult`: how one component of a run ended, as the runners, the targets' observers and the report record it."""

from __future__ import annotations

import dataclasses

__all__ = ["ComponentResult"]


@dataclasses.dataclass
class ComponentResult:
    component_id: str
    status: str  # executed | cached | skipped
    seconds: float
    execution_id: int | None
