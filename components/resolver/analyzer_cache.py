"""The analyzer cache Transform reads: the newest cache an earlier window of spans left.

tf.Transform caches each analyzer's accumulator per dataset (one span's train split): a Transform given
the cache of the window before analyzes only the spans that cache does not hold (the new span) and
merges the cached accumulators of the others.

Which cache: the newest one written for a window whose newest span is older than this run's span (the
Transform stamps `CACHE_SPAN` on the cache it writes). Not simply the newest cache: a run that trains on
the same span again (a rerun after a killed run, `--force`) would then read the cache its predecessor on
that span wrote, its Transform's inputs would differ, and TFX's execution cache would not serve it.
TFX's `LatestArtifactStrategy` would also return None on a first run (no cache yet), which TFX's input
resolution treats as an error; this strategy resolves to no cache then, and Transform analyzes every span.
"""

from __future__ import annotations

from typing import Optional

from tfx import types
from tfx.dsl.components.common import resolver

from components.transform.executor import CACHE_SPAN

__all__ = ["CACHE_KEY", "EXAMPLES_KEY", "EarlierWindowCacheStrategy"]

CACHE_KEY = "cache"  # every run's TransformCache
EXAMPLES_KEY = "examples"  # this run's Examples: the span it trains on


class EarlierWindowCacheStrategy(resolver.ResolverStrategy):
    """Resolves `cache` to the newest cache (greatest MLMD id) stamped with a span below the span of
    `examples`, or to none; `examples` passes through."""

    def resolve_artifacts(
        self, store, input_dict: dict[str, list[types.Artifact]]
    ) -> Optional[dict[str, list[types.Artifact]]]:
        examples = input_dict.get(EXAMPLES_KEY, [])
        span = max((a.span for a in examples), default=0)
        earlier = [
            cache
            for cache in input_dict.get(CACHE_KEY, [])
            if cache.has_custom_property(CACHE_SPAN) and 0 < cache.get_int_custom_property(CACHE_SPAN) < span
        ]
        return {CACHE_KEY: [max(earlier, key=lambda a: a.id)] if earlier else [], EXAMPLES_KEY: examples}
