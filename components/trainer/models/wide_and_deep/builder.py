"""Builds `model.type: wide_and_deep`: the dense tower joined with the one-hot categorical ids."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from components.trainer.models.model_inputs import ModelInput
from components.trainer.models.tower import dense_tower, table_parts
from components.trainer.models.wide_and_deep import WideAndDeepOptions

__all__ = ["build"]


def build(inputs_used: Sequence[ModelInput], inputs: dict[str, tf.Tensor], options: WideAndDeepOptions) -> tf.Tensor:
    """The tensor the prediction layer reads (see `components.trainer.models.base.ModelType.builder`)."""
    table = table_parts(inputs_used, inputs, options.embedding_dim)
    deep = dense_tower(table.deep(), options)
    return tf.keras.layers.concatenate([deep, *table.wide]) if table.wide else deep
