"""The previous span's statistics: the baseline `data.checks.drift` compares a new span with.

TFX's span resolver functions (`rolling_range`, `LatestSpan`) take only artifacts with both a `span` and a
`version` property, and ExampleStatistics has no `version`; TFX's older `SpanRangeStrategy` reads `span` as
a custom property, which StatisticsGen does not set. This strategy reads the `span` property.
"""

from __future__ import annotations

from typing import Optional

from tfx import types
from tfx.dsl.components.common import resolver

__all__ = ["PreviousSpanStrategy", "STATISTICS_KEY"]

STATISTICS_KEY = "statistics"  # every run's statistics; resolved to the previous span's newest


class PreviousSpanStrategy(resolver.ResolverStrategy):
    """Resolves `statistics` to the newest artifact of the greatest span below the newest span (none while
    there is one span). The pipeline runs on the newest span, whose statistics are this run's."""

    def resolve_artifacts(
        self, store, input_dict: dict[str, list[types.Artifact]]
    ) -> Optional[dict[str, list[types.Artifact]]]:
        artifacts = input_dict.get(STATISTICS_KEY, [])
        if not artifacts:
            return {STATISTICS_KEY: []}
        newest = max(a.span for a in artifacts)
        older = [a for a in artifacts if a.span < newest]
        if not older:
            return {STATISTICS_KEY: []}
        return {STATISTICS_KEY: [max(older, key=lambda a: (a.span, a.mlmd_artifact.create_time_since_epoch, a.id))]}
