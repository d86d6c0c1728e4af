"""The tf.Transform preprocessing_fn generated from the declared features.

Transform calls `preprocessing_fn(inputs, custom_config)`; `custom_config`
carries the feature table and label (see `components.transform.config`).
Every transformed feature is named `<column>_xf`; the label keeps its own name.
"""

from __future__ import annotations

import importlib
from typing import Any

import tensorflow as tf
import tensorflow_transform as tft

from components.common.autograph_rules import skip_autograph_for_tf_keras
from components.transform import media, missing
from components.transform.config import TransformConfig, transformed_name, vocabulary_name
from components.transform.labels import label_tensor

__all__ = ["preprocessing_fn", "fill_missing", "present_mask"]

skip_autograph_for_tf_keras()


def _as_dense(value: tf.Tensor | tf.SparseTensor, default: Any) -> tf.Tensor:
    if isinstance(value, tf.SparseTensor):
        dense_shape = [value.dense_shape[0], 1]
        value = tf.sparse.to_dense(tf.SparseTensor(value.indices, value.values, dense_shape), default_value=default)
    return tf.reshape(value, [-1])


def fill_missing(value: tf.Tensor | tf.SparseTensor, fill: Any = None) -> tf.Tensor:
    """Turns a possibly sparse column into a dense [batch] tensor, filling gaps."""
    dtype = value.dtype
    if fill is None:
        fill = "" if dtype == tf.string else 0
    if dtype == tf.string:
        default = tf.constant(str(fill), tf.string)
    else:
        default = tf.cast(tf.constant(float(fill)), dtype)
    return _as_dense(value, default)


def present_mask(value: tf.Tensor | tf.SparseTensor) -> tf.Tensor:
    """[batch] booleans: True where the column has a value."""
    if isinstance(value, tf.SparseTensor):
        ones = tf.SparseTensor(value.indices, tf.ones_like(value.values, tf.int8), value.dense_shape)
        return _as_dense(ones, tf.constant(0, tf.int8)) > 0
    return tf.ones_like(tf.reshape(value, [-1]), tf.bool)


def _numeric(value: tf.Tensor) -> tf.Tensor:
    if value.dtype == tf.string:
        # A column with no values at all is inferred as text by SchemaGen.
        return tf.strings.to_number(tf.where(value == "", "0", value), tf.float32)
    return tf.cast(value, tf.float32)


def _transform_feature(name: str, feature: dict, raw: tf.Tensor | tf.SparseTensor) -> tf.Tensor:
    kind = feature["transform"]
    if kind == "image":
        return media.decode_images(fill_missing(raw, ""), media.image_shape(feature))
    if kind == "text":
        return media.text_ids(name, feature, fill_missing(raw, ""))
    imputed = missing.transform_imputed(feature, raw)  # mean/median-imputed numeric columns, in one pass
    if imputed is not None:
        return imputed
    filled = missing.impute(feature, raw)  # `fill`, or the train split's mean/median (components.transform.missing)
    if kind == "zscore":
        return tft.scale_to_z_score(_numeric(filled))
    if kind == "minmax":
        return tft.scale_to_0_1(_numeric(filled))
    if kind == "log":
        return tft.scale_to_z_score(tf.math.log1p(tf.maximum(_numeric(filled), 0.0)))
    if kind == "identity":
        return _numeric(filled)
    if kind == "vocabulary":
        text = filled if filled.dtype == tf.string else tf.strings.as_string(filled)
        return tft.compute_and_apply_vocabulary(
            text,
            top_k=feature.get("top_k"),
            num_oov_buckets=feature["oov_buckets"],
            vocab_filename=vocabulary_name(name),
        )
    if kind == "bucketize":
        return tft.bucketize(_numeric(filled), feature["buckets"])
    if kind == "hash":
        text = filled if filled.dtype == tf.string else tf.strings.as_string(filled)
        return tf.strings.to_hash_bucket_fast(text, feature["hash_buckets"])
    if kind == "categorical":
        ids = tf.cast(_numeric(filled), tf.int64)
        in_range = tf.logical_and(ids >= 0, ids < feature["num_buckets"])
        return tf.where(in_range, ids, tf.zeros_like(ids))
    raise ValueError(f"unknown transform `{kind}` for feature `{name}`.")


def preprocessing_fn(inputs: dict, custom_config: dict) -> dict:
    """Transforms raw columns into model inputs as the spec declares."""
    config = TransformConfig.from_dict(custom_config)
    outputs = {
        transformed_name(name): _transform_feature(name, feature, inputs[name])
        for name, feature in config.features.items()
    }
    outputs.update(missing.indicators(config.features, inputs))  # `missing_indicator: true` features
    outputs[config.label_name] = label_tensor(config, inputs)
    if config.user_module:
        module_name, function_name = config.user_module.split(":")
        user_fn = getattr(importlib.import_module(module_name), function_name)
        outputs = user_fn(inputs=inputs, outputs=outputs, custom_config=custom_config)
    return outputs
