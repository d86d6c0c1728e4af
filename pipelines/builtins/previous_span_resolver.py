"""PreviousSpanResolver: the previous span's statistics from ML Metadata, for DataGate's drift between spans."""

from __future__ import annotations

from pipelines.builtins.record import Builtin, Compilation
from pipelines.builtins.spans import span_drift
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]


def _build(compilation: Compilation, inputs: dict):
    # TFX: only when a pipeline is built.
    from tfx.dsl.components.common import resolver
    from tfx.types import Channel, standard_artifacts

    from components.resolver.previous_span import PreviousSpanStrategy

    statistics = inputs["statistics"]
    # Every run's StatisticsGen outputs, not only this run's: the strategy picks the span before the newest.
    return resolver.Resolver(
        strategy_class=PreviousSpanStrategy,
        statistics=Channel(
            type=standard_artifacts.ExampleStatistics,
            producer_component_id=statistics.producer_component_id,
            output_key=statistics.output_key,
        ),
    )


BUILTIN = Builtin(
    id="PreviousSpanResolver",
    configured_by="data",
    inputs={"statistics": Port("ExampleStatistics")},
    outputs={"statistics": "ExampleStatistics"},
    wiring=lambda spec: {"statistics": "StatisticsGen.statistics"},
    build=_build,
    enabled=span_drift,
    waits_for=("StatisticsGen",),  # this run's statistics (the newest span) are written first
)
