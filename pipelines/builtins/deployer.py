"""Deployer (with `deploy.enabled`): loads the pushed model into the serving server and checks it answers."""

from __future__ import annotations

import os

from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]


def _build(compilation: Compilation, inputs: dict):
    from components.deployer.component import Deployer  # TFX: only when a pipeline is built

    resolved = compilation.resolved
    deploy = resolved.spec.deploy
    config_file = os.path.join(os.path.dirname(resolved.spec_file), deploy.config) if deploy.config else ""
    return Deployer(
        **inputs,
        model_name=resolved.model_name,
        serving_dir=resolved.serving_dir,
        url=deploy.url or "",
        config_file=config_file,
        p99_budget_ms=deploy.p99_budget_ms,
        sample_rows=deploy.sample_rows,
        max_request_mb=deploy.max_request_mb or 0.0,
    )


BUILTIN = Builtin(
    id="Deployer",
    configured_by="deploy",
    inputs={"model": Port("Model"), "pushed_model": Port("PushedModel"), "examples": Port("Examples")},
    outputs={"version": "Integer", "p99_ms": "Float"},
    wiring=lambda spec: {
        "model": "Trainer.model",
        "pushed_model": "Pusher.pushed_model",
        "examples": "ExampleGen.examples",
    },
    build=_build,
    enabled=lambda spec: spec.deploy.enabled,
)
