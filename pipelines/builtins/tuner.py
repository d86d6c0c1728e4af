"""Tuner: TFX's Tuner searches the `tuning:` section's space; the Trainer trains with the best values.

It reads what the Trainer reads (the same examples, Transform graph and
schema) and builds the same model through `components.tuner.tuner_fn`, which
gets the Trainer's `custom_config` plus the `tuning` section. Its
`best_hyperparameters` feed the Trainer's `hyperparameters` input. With
`training.module_file`, TFX's Tuner runs that file's `tuner_fn` unchanged,
with `training.custom_config`, as in stock TFX.
"""

from __future__ import annotations

import dataclasses

from pipelines.builtins.record import Builtin, Compilation
from pipelines.builtins.spans import after_example_gen
from pipelines.builtins.trainer import run_fn_config, training_inputs, training_wiring
from pipelines.graph.model import Port

__all__ = ["BUILTIN", "trial_steps"]


def trial_steps(spec) -> int:
    """Training steps per trial: `tuning.train_steps`, else `training.train_steps`."""
    return spec.tuning.train_steps or spec.training.train_steps


def _build(compilation: Compilation, inputs: dict):
    from tfx.components import Tuner  # TFX: only when a pipeline is built
    from tfx.proto import trainer_pb2

    resolved = compilation.resolved
    spec = resolved.spec
    steps = {
        "train_args": trainer_pb2.TrainArgs(num_steps=trial_steps(spec)),
        "eval_args": trainer_pb2.EvalArgs(num_steps=spec.training.eval_steps),
    }
    examples = inputs["examples"]
    inputs = training_inputs(compilation, inputs)
    if resolved.training_module_file is not None:
        return Tuner(
            module_file=resolved.training_module_file, **inputs, **steps, custom_config=spec.training.custom_config
        )
    tuner = Tuner(
        tuner_fn="components.tuner.tuner_fn.tuner_fn",
        **inputs,
        **steps,
        custom_config={**run_fn_config(compilation), "tuning": dataclasses.asdict(spec.tuning)},
    )
    return tuner if spec.transform.materialize else after_example_gen(tuner, examples, resolved)


BUILTIN = Builtin(
    id="Tuner",
    configured_by="tuning",
    inputs={
        "examples": Port("Examples"),
        "schema": Port("Schema", True),
        "transform_graph": Port("TransformGraph", True),
        "base_model": Port("Model", True),
    },
    outputs={"best_hyperparameters": "HyperParameters", "tuner_results": "TunerResults"},
    wiring=training_wiring,
    build=_build,
    enabled=lambda spec: spec.tuning is not None,
)
