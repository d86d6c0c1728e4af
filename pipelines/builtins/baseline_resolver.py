"""BaselineResolver: the latest blessed model before the candidate, which the Evaluator compares against."""

from __future__ import annotations

from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port

__all__ = ["BUILTIN", "latest_blessed_resolver"]


def latest_blessed_resolver(inputs: dict):
    """A Resolver of {model, model_blessing}: the latest blessed model other than `inputs["candidate"]` (if any).

    The Evaluator's baseline and the Trainer's warm start (`warm_start_resolver`) both use it.
    """
    # TFX: only when a pipeline is built.
    from tfx.dsl.components.common import resolver
    from tfx.types import Channel, standard_artifacts

    from components.resolver.baseline import LatestBlessedBaselineStrategy

    return resolver.Resolver(
        strategy_class=LatestBlessedBaselineStrategy,
        model=Channel(type=standard_artifacts.Model),
        model_blessing=Channel(type=standard_artifacts.ModelBlessing),
        **inputs,
    )


def _build(compilation: Compilation, inputs: dict):
    return latest_blessed_resolver(inputs)


BUILTIN = Builtin(
    id="BaselineResolver",
    configured_by="evaluation",
    inputs={"candidate": Port("Model")},
    outputs={"model": "Model", "model_blessing": "ModelBlessing", "candidate": "Model"},
    wiring=lambda spec: {"candidate": "Trainer.model"},
    build=_build,
)
