"""What a model type declares (`ModelType`), and the options every built-in type shares (`ModelOptions`).

Imports no TensorFlow: the spec layer reads these to type and check a spec's
`model:` section, and `python -m pipelines doctor` to advise on it. Only the
`builder` a `ModelType` names imports TensorFlow, when the Trainer builds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Optional

__all__ = ["DEFAULT_MODEL_TYPE", "ModelOptions", "ModelType"]

DEFAULT_MODEL_TYPE = "wide_and_deep"


@dataclasses.dataclass(frozen=True)
class ModelOptions:
    """The `model:` keys of every built-in type; each type's options class adds its own after these.

    `type` names the type (its registry entry); `hidden_units` are the dense
    layers of the head, `embedding_dim` the width of categorical embeddings
    (and of a text model's tokens), `dropout` the rate before the dense layers.
    `build_model: pkg.mod:fn` replaces the built-in model: it is called as
    `fn(feature_specs, label, config)` and returns a Keras model taking the
    transformed features.
    """

    type: str = DEFAULT_MODEL_TYPE
    hidden_units: list[int] = dataclasses.field(default_factory=lambda: [64, 32])
    embedding_dim: int = 8
    build_model: Optional[str] = None
    dropout: float = 0.0

    def __post_init__(self):
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"`dropout` must be 0 or more and below 1. Received: dropout={self.dropout}.")


# (ctx) -> problems: a spec rule (`pipelines.spec.rules`); ctx has `spec`, `profile` and `problem(path, message)`.
SpecRule = Callable[[Any], Iterator[Any]]
# (spec, GPU compute capabilities, GPU indices) -> advice lines (`python -m pipelines doctor SPEC`).
Advice = Callable[[Any, Sequence[Optional[tuple[int, int]]], Sequence[int]], list[str]]


@dataclasses.dataclass(frozen=True)
class ModelType:
    """One built-in model type, as the registry (`components.trainer.models.registry`) lists it.

    Attributes:
      name: the `model.type` value.
      options: its options dataclass (the `model:` keys, their types and defaults).
      builder: `module:function` (imports TensorFlow) called as `fn(inputs_used, inputs, options)`; it returns
        the tensor the prediction layer reads (`components.trainer.models.model_builder` adds that layer).
      media: the transform of the one feature it encodes (`image`, `text`); None: table features only.
      rules: spec rules of its own, run after the shared ones.
      advice: its `doctor` advice; None: none.
    """

    name: str
    options: type[ModelOptions]
    builder: str
    media: Optional[str] = None
    rules: tuple[SpecRule, ...] = ()
    advice: Optional[Advice] = None
