"""Trainer: the spec's model trained by `components.trainer.run_fn` on the transformed features.

With `training.module_file`, TFX's Trainer runs that file's `run_fn(fn_args)`
unchanged, on Transform's transformed examples as in stock TFX, with
`training.custom_config` as `fn_args.custom_config`.
"""

from __future__ import annotations

import dataclasses

from pipelines.builtins.record import Builtin, Compilation
from pipelines.builtins.spans import after_example_gen, windowed
from pipelines.builtins.transform import writes_transformed_examples
from pipelines.builtins.warm_start_resolver import warm_starts
from pipelines.graph.model import Port

__all__ = ["BUILTIN", "run_fn_config", "training_inputs", "training_wiring"]


def training_wiring(spec) -> dict[str, str]:
    """The inputs the Trainer (and the Tuner) read: the examples, Transform's graph and the schema."""
    return {
        "examples": "Transform.transformed_examples" if writes_transformed_examples(spec) else "ExampleGen.examples",
        "transform_graph": "Transform.transform_graph",
        "schema": "SchemaGen.schema",
    }


def run_fn_config(compilation: Compilation) -> dict:
    """The built-in `run_fn`'s `custom_config` (`components.trainer.run_fn`); the Tuner's `tuner_fn` reads it too."""
    resolved = compilation.resolved
    spec = resolved.spec
    return {
        "transform": compilation.config.to_dict(),
        "model": dataclasses.asdict(spec.model),
        # Without the module-file keys (None here), `warm_start: false` and `warm_start_steps: null`: runs
        # keep the cache key they had before those keys existed.
        "training": {
            k: v
            for k, v in dataclasses.asdict(spec.training).items()
            if k not in ("module_file", "custom_config") and (k not in ("warm_start", "warm_start_steps") or v)
        },
        "materialized": spec.transform.materialize,
        "metrics": list(spec.evaluation.metrics),
        # Only where there is one: other runs keep the Trainer's cache key they had before it existed.
        **({"label_scale": list(resolved.label_scale)} if resolved.label_scale else {}),
    }


def training_inputs(compilation: Compilation, inputs: dict) -> dict:
    """`inputs` with the examples the model trains on: with spans, the newest `data.window` spans."""
    spec = compilation.resolved.spec
    if writes_transformed_examples(spec):
        return inputs
    return {**inputs, "examples": windowed(inputs["examples"], compilation.resolved)}


def _build(compilation: Compilation, inputs: dict):
    # TFX: only when a pipeline is built.
    from tfx.components import Trainer
    from tfx.proto import trainer_pb2

    resolved = compilation.resolved
    spec = resolved.spec
    materialized = spec.transform.materialize
    steps = {
        "train_args": trainer_pb2.TrainArgs(num_steps=spec.training.train_steps),
        "eval_args": trainer_pb2.EvalArgs(num_steps=spec.training.eval_steps),
    }
    examples = inputs["examples"]
    inputs = training_inputs(compilation, inputs)
    if resolved.training_module_file is not None:
        return Trainer(
            module_file=resolved.training_module_file, **inputs, **steps, custom_config=spec.training.custom_config
        )
    trainer = Trainer(
        run_fn="components.trainer.run_fn.run_fn", **inputs, **steps, custom_config=run_fn_config(compilation)
    )
    return trainer if materialized else after_example_gen(trainer, examples, resolved)


BUILTIN = Builtin(
    id="Trainer",
    configured_by="model, training",
    inputs={
        "examples": Port("Examples"),
        "transform_graph": Port("TransformGraph", True),
        "schema": Port("Schema", True),
        "base_model": Port("Model", True),
        "hyperparameters": Port("HyperParameters", True),
    },
    outputs={"model": "Model", "model_run": "ModelRun"},
    wiring=lambda spec: {
        **training_wiring(spec),
        **({"base_model": "WarmStartResolver.model"} if warm_starts(spec) else {}),
        # The Tuner's best values override the spec's (`components.trainer.hyperparameters`).
        **({"hyperparameters": "Tuner.best_hyperparameters"} if spec.tuning is not None else {}),
    },
    build=_build,
)
