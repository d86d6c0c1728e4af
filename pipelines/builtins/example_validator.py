"""ExampleValidator: TFDV's anomalies of every split's statistics against the schema."""

from __future__ import annotations

from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]


def _build(compilation: Compilation, inputs: dict):
    from tfx.components import ExampleValidator  # TFX: only when a pipeline is built

    return ExampleValidator(**inputs)


BUILTIN = Builtin(
    id="ExampleValidator",
    configured_by="data",
    inputs={"statistics": Port("ExampleStatistics"), "schema": Port("Schema")},
    outputs={"anomalies": "ExampleAnomalies"},
    wiring=lambda spec: {"statistics": "StatisticsGen.statistics", "schema": "SchemaGen.schema"},
    build=_build,
)
