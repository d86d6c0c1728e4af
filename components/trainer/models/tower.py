"""The parts every built-in model type shares (imports TensorFlow): table features and the dense tower.

Numeric table features feed the deep part directly; categorical ids are
embedded (`embedding_dim` wide) for the deep part and one-hot encoded for the
wide (linear) part, which only `wide_and_deep` uses. The dense tower is
`dropout` then one ReLU layer per `hidden_units` entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import tensorflow as tf

from components.common.names import tensor_name
from components.trainer.models.base import ModelOptions
from components.trainer.models.model_inputs import ModelInput

__all__ = ["TableParts", "table_parts", "dense_tower"]


@dataclasses.dataclass(frozen=True)
class TableParts:
    """The table features as tensors: numeric columns, embedded ids (deep part), one-hot ids (wide part)."""

    numeric: list[tf.Tensor]
    embedded: list[tf.Tensor]
    wide: list[tf.Tensor]

    def deep(self, *encoded: tf.Tensor) -> list[tf.Tensor]:
        """The deep part's inputs: `encoded` (an image or text encoding) first, then numeric, then embedded."""
        return [*encoded, *self.numeric, *self.embedded]


def table_parts(inputs_used: Sequence[ModelInput], inputs: dict[str, tf.Tensor], embedding_dim: int) -> TableParts:
    """The table (non-media) inputs' layers, in input order.

    Args:
      inputs_used: the model inputs; media ones are skipped (their type's builder encodes them).
      inputs: Keras inputs by name.
      embedding_dim: the width of each categorical embedding.
    """
    numeric, embedded, wide = [], [], []
    for used in inputs_used:
        if used.media:
            continue
        column = tf.keras.layers.Reshape((used.width,))(inputs[used.name])
        if used.categorical:
            if used.hashed:
                column = tf.keras.layers.Hashing(used.num_tokens, name=f"hash_{used.name}")(column)
            name = used.column or used.name
            embedding = tf.keras.layers.Embedding(used.num_tokens, embedding_dim, name=f"embed_{tensor_name(name)}")
            embedded.append(tf.keras.layers.Flatten()(embedding(column)))
            wide.append(tf.keras.layers.CategoryEncoding(num_tokens=used.num_tokens, output_mode="one_hot")(column))
        else:
            numeric.append(column)
    return TableParts(numeric, embedded, wide)


def dense_tower(deep_inputs: Sequence[tf.Tensor], options: ModelOptions) -> tf.Tensor:
    """`deep_inputs` joined, then `dropout` and the `hidden_units` ReLU layers."""
    deep = deep_inputs[0] if len(deep_inputs) == 1 else tf.keras.layers.concatenate(list(deep_inputs))
    if options.dropout:
        deep = tf.keras.layers.Dropout(options.dropout)(deep)
    for units in options.hidden_units:
        deep = tf.keras.layers.Dense(units, activation="relu")(deep)
    return deep
