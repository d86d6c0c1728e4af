"""WarmStartResolver: the latest blessed model, whose weights the Trainer starts from (`training.warm_start`).

The same resolver as the Evaluator's baseline (`baseline_resolver`), without a
candidate: it runs before the Trainer, so the newest blessed model is the one
the previous run pushed. On a first run it resolves nothing and the Trainer
starts cold.
"""

from __future__ import annotations

from pipelines.builtins.baseline_resolver import latest_blessed_resolver
from pipelines.builtins.record import Builtin, Compilation

__all__ = ["BUILTIN", "warm_starts"]


def warm_starts(spec) -> bool:
    """Whether `spec`'s Trainer starts from the last blessed model (the built-in run_fn or a module file)."""
    return bool(spec.training.warm_start)


def _build(compilation: Compilation, inputs: dict):
    return latest_blessed_resolver(inputs)


BUILTIN = Builtin(
    id="WarmStartResolver",
    configured_by="training.warm_start",
    inputs={},
    outputs={"model": "Model", "model_blessing": "ModelBlessing"},
    wiring=lambda spec: {},
    build=_build,
    enabled=warm_starts,
)
