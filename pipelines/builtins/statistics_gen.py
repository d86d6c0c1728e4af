"""StatisticsGen: TFDV statistics of every split, over `data.checks.sample_rate` of the rows."""

from __future__ import annotations

from typing import Optional

from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]


def _stats_options(sample_rate: Optional[float]):
    """TFDV's options for StatisticsGen: `data.checks.sample_rate` of the rows, or None (TFX's defaults: all)."""
    if sample_rate is None:
        return None
    import tensorflow_data_validation as tfdv  # heavy: only when a pipeline is built

    return tfdv.StatsOptions(sample_rate=sample_rate)


def _build(compilation: Compilation, inputs: dict):
    from components.statistics_gen.component import StatisticsGen  # TFX: only when a pipeline is built

    return StatisticsGen(**inputs, stats_options=_stats_options(compilation.resolved.spec.data.checks.sample_rate))


BUILTIN = Builtin(
    id="StatisticsGen",
    configured_by="data",
    inputs={"examples": Port("Examples"), "schema": Port("Schema", optional=True)},
    outputs={"statistics": "ExampleStatistics"},
    wiring=lambda spec: {"examples": "ExampleGen.examples"},
    build=_build,
)
