"""SchemaGen: the spec's `schema:` file (ImportSchemaGen), or a schema inferred from the train split."""

from __future__ import annotations

from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]


def _build(compilation: Compilation, inputs: dict):
    # TFX: only when a pipeline is built.
    from tfx.components import SchemaGen
    from tfx.components.schema_gen.import_schema_gen.component import ImportSchemaGen

    resolved = compilation.resolved
    if resolved.schema_path:
        return ImportSchemaGen(schema_file=resolved.schema_path)
    # The schema comes from train only: ExampleValidator then flags eval values train never had.
    # TFX module files are written against TFX's examples' schemas, whose always-present columns are
    # dense (`infer_feature_shape=True`): their labels and features reach `run_fn` as dense tensors.
    return SchemaGen(
        **inputs,
        infer_feature_shape=resolved.spec.training.module_file is not None,
        exclude_splits=[name for name in resolved.spec.data.splits if name != "train"],
    )


BUILTIN = Builtin(
    id="SchemaGen",
    configured_by="schema",
    inputs={"statistics": Port("ExampleStatistics", optional=True)},
    outputs={"schema": "Schema"},
    wiring=lambda spec: {} if spec.schema else {"statistics": "StatisticsGen.statistics"},
    build=_build,
)
