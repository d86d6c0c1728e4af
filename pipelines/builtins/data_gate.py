"""DataGate: stops the run when the data cannot train a model (anomalies, label, skew/drift), before Transform."""

from __future__ import annotations

import json

from pipelines.builtins.record import Builtin, Compilation
from pipelines.builtins.spans import span_drift
from pipelines.graph.model import Port
from pipelines.spec.models import MEDIA_TRANSFORMS

__all__ = ["BUILTIN"]


def _build(compilation: Compilation, inputs: dict):
    from components.data_gate.component import DataGate  # TFX: only when a pipeline is built

    spec = compilation.resolved.spec
    checks = spec.data.checks
    return DataGate(
        **inputs,
        label_column=spec.label.column or "",
        task=spec.label.task,
        skew=checks.skew or 0.0,
        # With spans, drift is between the new span and the previous one (`previous_statistics`).
        drift=0.0 if span_drift(spec) else checks.drift or 0.0,
        unseen_categories=checks.unseen_categories,
        free_text_columns=json.dumps(sorted(n for n, f in spec.features.items() if f.transform in MEDIA_TRANSFORMS)),
        **({"span_drift": checks.drift} if span_drift(spec) else {}),
    )


BUILTIN = Builtin(
    id="DataGate",
    configured_by="data, label",
    inputs={
        "anomalies": Port("ExampleAnomalies"),
        "statistics": Port("ExampleStatistics", True),
        "schema": Port("Schema", True),
        "previous_statistics": Port("ExampleStatistics", True),
    },
    outputs={},
    wiring=lambda spec: {
        "anomalies": "ExampleValidator.anomalies",
        "statistics": "StatisticsGen.statistics",
        "schema": "SchemaGen.schema",
        **({"previous_statistics": "PreviousSpanResolver.statistics"} if span_drift(spec) else {}),
    },
    build=_build,
    gates_data=True,
)
