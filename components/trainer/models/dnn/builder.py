"""Builds `model.type: dnn`: the dense tower over numeric features and categorical embeddings."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from components.trainer.models.dnn import DnnOptions
from components.trainer.models.model_inputs import ModelInput
from components.trainer.models.tower import dense_tower, table_parts

__all__ = ["build"]


def build(inputs_used: Sequence[ModelInput], inputs: dict[str, tf.Tensor], options: DnnOptions) -> tf.Tensor:
    """The tensor the prediction layer reads (see `components.trainer.models.base.ModelType.builder`)."""
    table = table_parts(inputs_used, inputs, options.embedding_dim)
    return dense_tower(table.deep(), options)
