"""`model.type: dnn`: a dense tower over the table features (numeric columns and embedded categorical ids)."""

from __future__ import annotations

import dataclasses

from components.trainer.models.base import ModelOptions, ModelType

__all__ = ["DnnOptions", "MODEL_TYPE"]


@dataclasses.dataclass(frozen=True)
class DnnOptions(ModelOptions):
    """The shared options (`ModelOptions`) only."""

    type: str = "dnn"


MODEL_TYPE = ModelType(name="dnn", options=DnnOptions, builder="components.trainer.models.dnn.builder:build")
