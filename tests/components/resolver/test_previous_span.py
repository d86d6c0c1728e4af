"""PreviousSpanStrategy: the statistics span drift compares the newest span with."""

from __future__ import annotations

from tfx.types import standard_artifacts

from components.resolver.previous_span import STATISTICS_KEY, PreviousSpanStrategy


def statistics(artifact_id: int, span: int, created: int):
    artifact = standard_artifacts.ExampleStatistics()
    artifact.id = artifact_id
    artifact.span = span
    artifact.mlmd_artifact.create_time_since_epoch = created
    return artifact


def resolve(*artifacts):
    return PreviousSpanStrategy().resolve_artifacts(None, {STATISTICS_KEY: list(artifacts)})[STATISTICS_KEY]


def test_the_previous_span_s_newest_statistics_are_resolved():
    old, backfilled, newest = statistics(1, 2, 10), statistics(5, 2, 50), statistics(4, 3, 40)

    assert [a.id for a in resolve(statistics(2, 1, 20), old, newest, backfilled)] == [5]


def test_nothing_is_resolved_while_there_is_one_span():
    assert resolve(statistics(1, 3, 10), statistics(2, 3, 20)) == []
    assert resolve() == []
