"""Builds `model.type: image_classifier`: a Keras Applications backbone over one image input, and a dense head.

The image input holds pixels 0-255 at the declared `image_size` (Transform
decodes and resizes, `components.transform.media`). The model adds, in order:
training-only augmentation layers (`augment`), the backbone's own input
normalisation, the backbone without its top (global average pooling), then
`dropout` and `hidden_units` dense layers, joined by any table features.

`weights` is a local weights file for the backbone without its top (the
`..._notop.h5` files Keras Applications publishes); null starts from random
weights, and then the backbone's batch normalisation follows its batches
faster (momentum `SCRATCH_BN_MOMENTUM` instead of Keras's 0.99-0.999): with
the slow default, after a few hundred steps the moving statistics that
evaluation and serving use are still near their initial values, and the
model predicts at chance (digits, MobileNetV2, 200 steps: eval accuracy 0.10
with 0.999, 0.91 with 0.9). `frozen_layers` freezes the backbone's first that many layers, or
`all` of it: its batch normalisation then runs in inference mode, as
fine-tuning wants.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import tensorflow as tf

from components.trainer.models.image_classifier import ImageClassifierOptions
from components.trainer.models.model_inputs import ModelInput, single_media_input
from components.trainer.models.tower import dense_tower, table_parts

__all__ = ["BACKBONES", "MIN_IMAGE_SIZE", "SCRATCH_BN_MOMENTUM", "image_features", "build"]

# Keras Applications constructor and input normalisation, per backbone name.
BACKBONES: dict[str, tuple[Callable[..., tf.keras.Model], str]] = {
    "ResNet50": (tf.keras.applications.ResNet50, "caffe"),
    "EfficientNetB0": (tf.keras.applications.EfficientNetB0, "none"),  # rescales inside the model
    "MobileNetV2": (tf.keras.applications.MobileNetV2, "tf"),
}
# Keras Applications refuse smaller inputs.
MIN_IMAGE_SIZE = 32
# Batch-norm momentum of a backbone trained from random weights (see the module docstring).
SCRATCH_BN_MOMENTUM = 0.9

_AUGMENTATIONS: dict[str, Callable[[int], tf.keras.layers.Layer]] = {
    "flip": lambda seed: tf.keras.layers.RandomFlip("horizontal", seed=seed, name="augment_flip"),
    "rotate": lambda seed: tf.keras.layers.RandomRotation(0.05, seed=seed, name="augment_rotate"),
    "zoom": lambda seed: tf.keras.layers.RandomZoom(0.1, seed=seed, name="augment_zoom"),
    "contrast": lambda seed: tf.keras.layers.RandomContrast(0.2, seed=seed, name="augment_contrast"),
}

# ImageNet channel means (RGB) that caffe-style backbones (ResNet50) subtract, in BGR order.
_CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)


def _normalise(images: tf.Tensor, style: str, channels: int) -> tf.Tensor:
    """The backbone's expected input from 0-255 pixels (Keras Applications' `preprocess_input`, as layers)."""
    if style == "tf":
        return tf.keras.layers.Rescaling(1.0 / 127.5, offset=-1.0, name="normalise")(images)
    if style == "caffe":
        if channels == 3:
            images = tf.keras.layers.Lambda(lambda x: x[..., ::-1], name="rgb_to_bgr")(images)
            mean = _CAFFE_MEAN_BGR
        else:
            mean = (sum(_CAFFE_MEAN_BGR) / 3,)
        variance = [1.0] * channels
        return tf.keras.layers.Normalization(mean=list(mean), variance=variance, name="normalise")(images)
    return images


def _check_size(used: ModelInput, backbone: str) -> None:
    height, width, _ = used.dims
    if min(height, width) < MIN_IMAGE_SIZE:
        raise ValueError(
            f"`{backbone}` needs images of at least {MIN_IMAGE_SIZE}x{MIN_IMAGE_SIZE} pixels. Received: "
            f"image_size=[{height}, {width}] for feature `{used.column}`. Fix: set `image_size` to at least "
            f"[{MIN_IMAGE_SIZE}, {MIN_IMAGE_SIZE}] (smaller images are scaled up)."
        )


def _weights_file(weights: str | None) -> str | None:
    if weights is None:
        return None
    if not os.path.isfile(weights):
        raise ValueError(
            f"`model.weights` is not a file: {weights}. Expected a local weights file of the backbone without "
            "its top (e.g. mobilenet_v2_..._no_top.h5). Fix the path, or write `weights: null` to start from "
            "random weights."
        )
    return weights


def _backbone(used: ModelInput, options: ImageClassifierOptions) -> tuple[tf.keras.Model, str]:
    constructor, style = BACKBONES[options.backbone]
    _check_size(used, options.backbone)
    backbone = constructor(
        include_top=False,
        weights=_weights_file(options.weights),
        input_shape=used.dims,
        pooling="avg",
    )
    if options.weights is None:
        for layer in backbone.layers:
            if isinstance(layer, tf.keras.layers.BatchNormalization):
                layer.momentum = SCRATCH_BN_MOMENTUM
    frozen = options.frozen_layers
    if frozen == "all":
        backbone.trainable = False
    elif frozen:
        for layer in backbone.layers[: int(frozen)]:
            layer.trainable = False
    return backbone, style


def image_features(
    inputs_used: Sequence[ModelInput], inputs: dict[str, tf.Tensor], options: ImageClassifierOptions, seed: int = 0
) -> tf.Tensor:
    """The pooled backbone features of the one image input.

    Args:
      inputs_used: the model inputs; exactly one must be an image.
      inputs: Keras inputs by name.
      options: the spec's `model` section.
      seed: seeds the augmentation layers.

    Returns:
      [batch, features] float tensor.

    Raises:
      ValueError: not exactly one image input, an image smaller than the backbone takes, or a missing
        weights file.
    """
    used = single_media_input(inputs_used, "image", "image_classifier")
    pixels = inputs[used.name]
    for index, name in enumerate(options.augment):
        pixels = _AUGMENTATIONS[name](seed + index)(pixels)  # identity outside training
    backbone, style = _backbone(used, options)
    return backbone(_normalise(pixels, style, used.dims[2]))


def build(
    inputs_used: Sequence[ModelInput], inputs: dict[str, tf.Tensor], options: ImageClassifierOptions
) -> tf.Tensor:
    """The pooled image features joined by the table features, through the dense tower: the tensor the
    prediction layer reads (see `components.trainer.models.base.ModelType.builder`)."""
    pooled = image_features(inputs_used, inputs, options)
    table = table_parts(inputs_used, inputs, options.embedding_dim)
    return dense_tower(table.deep(pooled), options)
