"""EarlierWindowCacheStrategy: the analyzer cache of the newest earlier window, or none."""

from __future__ import annotations

from tfx.types import standard_artifacts

from components.resolver.analyzer_cache import CACHE_KEY, EXAMPLES_KEY, EarlierWindowCacheStrategy
from components.transform.executor import stamp_cache_span


def cache(artifact_id: int, span: int | None):
    """A TransformCache as our Transform leaves it after analyzing a window whose newest span is `span`."""
    artifact = standard_artifacts.TransformCache()
    artifact.id = artifact_id
    if span is not None:
        examples = standard_artifacts.Examples()
        examples.span = span
        stamp_cache_span({"examples": [examples]}, {"updated_analyzer_cache": [artifact]})
    return artifact


def resolve(span: int, *caches):
    examples = standard_artifacts.Examples()
    examples.span = span
    resolved = EarlierWindowCacheStrategy().resolve_artifacts(None, {CACHE_KEY: list(caches), EXAMPLES_KEY: [examples]})
    assert resolved[EXAMPLES_KEY] == [examples]
    return [a.id for a in resolved[CACHE_KEY]]


def test_the_newest_cache_of_an_earlier_window_is_resolved():
    assert resolve(4, cache(3, 2), cache(9, 3), cache(5, 3)) == [9]


def test_a_rerun_on_the_same_span_resolves_the_cache_its_first_run_read():
    # Span 4's first run read cache 9 (span 3) and wrote cache 12 (span 4): a rerun on span 4 reads 9 again.
    assert resolve(4, cache(9, 3), cache(12, 4)) == [9]


def test_a_first_run_and_caches_without_a_span_resolve_no_cache():
    assert resolve(3) == []
    assert resolve(3, cache(9, None)) == []  # not written by our Transform over spans


def test_tfx_s_latest_artifact_strategy_still_returns_none_without_artifacts():
    """One reason the strategy exists: TFX's fails a first run's input resolution (None)."""
    from tfx.dsl.input_resolution.strategies.latest_artifact_strategy import LatestArtifactStrategy

    assert LatestArtifactStrategy().resolve_artifacts(None, {CACHE_KEY: []}) is None
