"""The Trainer's entry point to the built-in models: the `model.type`'s builder, then the prediction layer.

Each type (`components.trainer.models.registry`) builds the tensor the
prediction layer reads from the model inputs (the declared features'
`<column>_xf` and any extra output of a user `transform.module`, see
`components.trainer.models.model_inputs`) and its options; this module adds
the inputs, the prediction layer that fits the label and, for regression,
the label scale. `model.build_model` replaces all of it with a user function.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, Optional

import tensorflow as tf

from components.trainer.models import model_inputs
from components.trainer.models.model_inputs import ModelInput
from components.trainer.models.registry import model_type, options_from_dict, type_for_media
from components.transform.config import CATEGORICAL, TransformConfig

__all__ = ["build_model", "head", "check_head", "load_user_builder", "input_dtype"]


def input_dtype(transform: str) -> tf.DType:
    return tf.int64 if transform in CATEGORICAL else tf.float32


def load_user_builder(reference: str) -> Callable[..., tf.keras.Model]:
    """Imports `pkg.module:function`."""
    module_name, function_name = reference.split(":")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, function_name)
    except AttributeError:
        raise AttributeError(
            f"`{reference}`: module `{module_name}` has no function `{function_name}`. Fix `model.build_model`."
        ) from None


def build_model(
    config: TransformConfig,
    model: dict[str, Any],
    vocabulary_sizes: dict[str, int],
    inputs_used: Optional[Sequence[ModelInput]] = None,
    label_scale: Optional[Sequence[float]] = None,
) -> tf.keras.Model:
    """Builds the model the spec declares (not compiled).

    Args:
      config: the feature table and label.
      model: the spec's `model` section as a dict.
      vocabulary_sizes: column -> vocabulary size for `vocabulary` features.
      inputs_used: the model inputs (`model_inputs.from_transform_output`: the `<column>_xf` features and a
        user transform's extra outputs); None: the declared features' `<column>_xf` only.
      label_scale: regression: the label's (mean, std); the model then predicts `mean + std * output` of
        its linear unit (a layer `label_scale`), so labels far from 0 and 1 are learned at the same rate.
        A user `build_model` finds it in its `config` as `label_scale` ([mean, std], or None).

    Returns:
      The Keras model.
    """
    inputs_used = list(inputs_used) if inputs_used is not None else model_inputs.from_config(config, vocabulary_sizes)
    inputs = {i.name: tf.keras.Input(shape=i.shape, name=i.name, dtype=i.dtype) for i in inputs_used}
    scale = list(label_scale) if label_scale and config.task != "classification" else None
    if model.get("build_model"):
        return load_user_builder(model["build_model"])(
            feature_specs=config.features, label=config.label_name, config={**model, "label_scale": scale}
        )

    options = options_from_dict(model)
    kind = model_type(options.type)
    media = [used for used in inputs_used if used.media]
    if media and kind.media is None:
        raise ValueError(
            f"`model.type: {kind.name}` takes table features only. Received: `transform: {media[0].media}` feature "
            f"`{media[0].column}`. Fix: `model.type: {type_for_media(media[0].media)}`, or remove the feature."
        )
    module_name, function_name = kind.builder.split(":")
    builder = getattr(importlib.import_module(module_name), function_name)
    head_input = builder(inputs_used, inputs, options)
    units, activation = head(config)
    output = tf.keras.layers.Dense(units, activation=activation, dtype="float32", name="prediction")(head_input)
    if scale:
        mean, std = scale
        output = tf.keras.layers.Rescaling(scale=std, offset=mean, dtype="float32", name="label_scale")(output)
    return tf.keras.Model(inputs, output)


def head(config: TransformConfig) -> tuple[int, str | None]:
    """The output layer's (units, activation) for the label.

    Args:
      config: the label's task and classes.

    Returns:
      Binary: one sigmoid unit (the positive class's probability); multi-class:
      one softmax unit per class; regression: one linear unit.
    """
    if config.task != "classification":
        return 1, None
    if config.num_classes > 2:
        return config.num_classes, "softmax"
    return 1, "sigmoid"


def check_head(model: tf.keras.Model, config: TransformConfig) -> None:
    """Checks that a model (a user's `build_model` too) outputs one column per score the label needs.

    Args:
      model: the built model.
      config: the label's task and classes.

    Raises:
      ValueError: the output width does not fit the label.
    """
    units, activation = head(config)
    width = model.output_shape[-1] if len(model.output_shape) > 1 else 1
    if width != units:
        what = f"{config.num_classes} classes {config.class_names}" if config.num_classes > 2 else "this label"
        raise ValueError(
            f"the model outputs {width} value(s) per example. Expected {units} for {what} "
            f"({'a ' + activation + ' layer' if activation else 'a linear layer'} of {units} unit(s)). "
            "Fix the last layer of `model.build_model`."
        )
