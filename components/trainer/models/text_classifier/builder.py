"""Builds `model.type: text_classifier`: word ids of one text input through an encoder, then a dense head.

Encoders (`model.encoder`):
- `transformer`: word and position embeddings (`embedding_dim` wide), then
  `num_layers` Transformer encoder blocks (self-attention with `num_heads`
  heads over the non-padding words, a feed-forward layer of 2x the width,
  residual connections and layer normalisation), then the mean over words.
- `bag_of_embeddings`: the mean of the word embeddings (the baseline).

Id 0 is padding (`components.transform.media.text_ids`): it is masked out of
attention and of the means.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from components.trainer.models.model_inputs import ModelInput, single_media_input
from components.trainer.models.text_classifier import TextClassifierOptions
from components.trainer.models.tower import dense_tower, table_parts

__all__ = ["TransformerBlock", "MaskedMean", "PositionEmbedding", "text_features", "build"]


class PositionEmbedding(tf.keras.layers.Layer):
    """Adds a learned embedding of each position to a [batch, length, width] sequence."""

    def __init__(self, length: int, width: int, **kwargs):
        super().__init__(**kwargs)
        self.length, self.width = length, width
        self.positions = tf.keras.layers.Embedding(length, width)

    def call(self, sequence):
        return sequence + self.positions(tf.range(self.length))

    def get_config(self) -> dict:
        return {**super().get_config(), "length": self.length, "width": self.width}


class TransformerBlock(tf.keras.layers.Layer):
    """One post-norm Transformer encoder block over [batch, length, width], padding masked by `mask`."""

    def __init__(self, width: int, heads: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.width, self.heads, self.dropout = width, heads, dropout
        self.attention = tf.keras.layers.MultiHeadAttention(heads, key_dim=max(width // heads, 1), dropout=dropout)
        self.feed_forward = tf.keras.Sequential(
            [tf.keras.layers.Dense(2 * width, activation="relu"), tf.keras.layers.Dense(width)]
        )
        self.attention_norm = tf.keras.layers.LayerNormalization(epsilon=1e-6)
        self.output_norm = tf.keras.layers.LayerNormalization(epsilon=1e-6)
        self.output_dropout = tf.keras.layers.Dropout(dropout)

    def call(self, sequence, mask, training=None):
        attention_mask = tf.logical_and(mask[:, :, tf.newaxis], mask[:, tf.newaxis, :])
        attended = self.attention(sequence, sequence, attention_mask=attention_mask, training=training)
        sequence = self.attention_norm(sequence + attended)
        forward = self.output_dropout(self.feed_forward(sequence), training=training)
        return self.output_norm(sequence + forward)

    def get_config(self) -> dict:
        return {**super().get_config(), "width": self.width, "heads": self.heads, "dropout": self.dropout}


class MaskedMean(tf.keras.layers.Layer):
    """The mean over the words where `mask` is true ([batch, length, width] -> [batch, width]); 0 for none."""

    def call(self, sequence, mask):
        weights = tf.cast(mask, sequence.dtype)[:, :, tf.newaxis]
        total = tf.reduce_sum(sequence * weights, axis=1)
        count = tf.maximum(tf.reduce_sum(weights, axis=1), tf.cast(1.0, sequence.dtype))
        return total / count


def text_features(
    inputs_used: Sequence[ModelInput], inputs: dict[str, tf.Tensor], options: TextClassifierOptions
) -> tf.Tensor:
    """The encoded text of the one text input.

    Args:
      inputs_used: the model inputs; exactly one must be a text.
      inputs: Keras inputs by name.
      options: the spec's `model` section (`encoder`, `embedding_dim`, `num_layers`, `num_heads`, `dropout`).

    Returns:
      [batch, embedding_dim] float tensor.

    Raises:
      ValueError: not exactly one text input.
    """
    used = single_media_input(inputs_used, "text", "text_classifier")
    width = options.embedding_dim
    ids = inputs[used.name]
    mask = tf.keras.layers.Lambda(lambda x: tf.not_equal(x, 0), name="not_padding")(ids)
    sequence = tf.keras.layers.Embedding(used.num_tokens, width, name="word_embedding")(ids)
    if options.encoder == "transformer":
        sequence = PositionEmbedding(used.width, width, name="position_embedding")(sequence)
        for _ in range(options.num_layers):
            block = TransformerBlock(width, options.num_heads, options.dropout)
            sequence = block(sequence, mask=mask)
    return MaskedMean(name="mean_over_words")(sequence, mask=mask)


def build(inputs_used: Sequence[ModelInput], inputs: dict[str, tf.Tensor], options: TextClassifierOptions) -> tf.Tensor:
    """The encoded text joined by the table features, through the dense tower: the tensor the prediction
    layer reads (see `components.trainer.models.base.ModelType.builder`)."""
    encoded = text_features(inputs_used, inputs, options)
    table = table_parts(inputs_used, inputs, options.embedding_dim)
    return dense_tower(table.deep(encoded), options)
