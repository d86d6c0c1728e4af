"""BulkInferrer (with `predict.enabled`): scores this run's new examples with the blessed model, after the Pusher.

TFX's BulkInferrer on the model's `serving_default` signature (our executor,
`components.bulk_inferrer.executor`, makes tfx_bsl accept its string
`label` output). It reads what this run's ExampleGen wrote: the newest span
with `{SPAN}` in `data.path`, else all the data, every split. TFX's executor
scores only a model the Evaluator blessed; an unblessed run writes no
predictions.
"""

from __future__ import annotations

from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]

SIGNATURE = "serving_default"


def _build(compilation: Compilation, inputs: dict):
    # TFX: only when a pipeline is built.
    from tfx.components import BulkInferrer
    from tfx.dsl.components.base import executor_spec
    from tfx.proto import bulk_inferrer_pb2

    from components.bulk_inferrer.executor import Executor

    inferrer = BulkInferrer(
        **inputs,
        model_spec=bulk_inferrer_pb2.ModelSpec(model_signature_name=[SIGNATURE]),
        data_spec=bulk_inferrer_pb2.DataSpec(),
    )
    # TFX's BulkInferrer takes no `custom_executor_spec`: its spec is replaced as the Kubeflow target replaces the
    # Trainer's.
    inferrer.executor_spec = executor_spec.BeamExecutorSpec(Executor)
    return inferrer


BUILTIN = Builtin(
    id="BulkInferrer",
    configured_by="predict",
    inputs={"examples": Port("Examples"), "model": Port("Model", True), "model_blessing": Port("ModelBlessing", True)},
    outputs={"inference_result": "InferenceResult"},
    wiring=lambda spec: {
        "examples": "ExampleGen.examples",
        "model": "Trainer.model",
        "model_blessing": "Evaluator.blessing",
    },
    build=_build,
    enabled=lambda spec: spec.predict.enabled,
    waits_for=("Pusher",),
)
