"""`model.type: wide_and_deep` (the default): the dense tower, and a linear (wide) part over one-hot
categorical ids beside it; both feed the prediction layer. It needs at least one categorical feature."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from components.trainer.models.base import ModelOptions, ModelType

__all__ = ["WideAndDeepOptions", "MODEL_TYPE", "rule_needs_categorical"]


@dataclasses.dataclass(frozen=True)
class WideAndDeepOptions(ModelOptions):
    """The shared options (`ModelOptions`) only."""

    type: str = "wide_and_deep"


def rule_needs_categorical(ctx: Any) -> Iterator[Any]:
    """The wide part is the one-hot categorical ids: without a categorical feature it would be empty."""
    if ctx.spec.model.build_model is None and not any(f.categorical for f in ctx.spec.features.values()):
        yield ctx.problem(
            "model.type",
            "`wide_and_deep` needs at least one categorical feature (vocabulary, bucketize, hash, categorical). "
            "Use `type: dnn`.",
        )


MODEL_TYPE = ModelType(
    name="wide_and_deep",
    options=WideAndDeepOptions,
    builder="components.trainer.models.wide_and_deep.builder:build",
    rules=(rule_needs_categorical,),
)
