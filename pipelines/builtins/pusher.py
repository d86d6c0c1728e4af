"""Pusher: copies a blessed model into `serving_dir/<model>/<version>`, atomically (our executor)."""

from __future__ import annotations

import os

from pipelines.builtins.quiet import CUSTOM_EXECUTOR_SPEC_DEPRECATED, dropping
from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]


def _build(compilation: Compilation, inputs: dict):
    # TFX: only when a pipeline is built.
    from tfx.components import Pusher
    from tfx.dsl.components.base import executor_spec
    from tfx.proto import pusher_pb2

    from components.pusher.executor import Executor as AtomicPusherExecutor

    resolved = compilation.resolved
    # TFX logs "`custom_executor_spec` is deprecated" for any Pusher given an executor; ours is on purpose
    # (the atomic pusher) and nobody reading a run can act on it, whichever target compiles the pipeline.
    with dropping(CUSTOM_EXECUTOR_SPEC_DEPRECATED):
        return Pusher(
            **inputs,
            push_destination=pusher_pb2.PushDestination(
                filesystem=pusher_pb2.PushDestination.Filesystem(
                    base_directory=os.path.join(resolved.serving_dir, resolved.model_name)
                )
            ),
            custom_executor_spec=executor_spec.ExecutorClassSpec(AtomicPusherExecutor),
        )


BUILTIN = Builtin(
    id="Pusher",
    configured_by="push",
    inputs={
        "model": Port("Model", True),
        "model_blessing": Port("ModelBlessing", True),
        "infra_blessing": Port("InfraBlessing", True),
    },
    outputs={"pushed_model": "PushedModel"},
    wiring=lambda spec: {"model": "Trainer.model", "model_blessing": "Evaluator.blessing"},
    build=_build,
)
