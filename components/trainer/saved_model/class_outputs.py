"""What the serving signatures answer for a label: class names and scores, or a number.

Classification (TF Serving's Classify shape): `scores` [batch, num_classes]
float32 (softmax; a binary model's `[1 - p, p]`), `classes` [batch,
num_classes] the class names in index order (every row the same, as Classify
returns them) and `label` [batch] the predicted class name. A binary model
also answers `probability` [batch], the positive class's score (what the
Evaluator scores). Regression: `prediction` [batch].

Example:
    >>> outputs = predict_outputs(model_output, ["Adelie", "Chinstrap", "Gentoo"])
    >>> sorted(outputs)
    ['classes', 'label', 'scores']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import tensorflow as tf
import tensorflow_transform as tft

from components.transform.config import TransformConfig
from components.transform.labels import LABEL_CLASSES

__all__ = ["class_names", "class_scores", "predict_outputs", "classify_outputs", "regression_outputs"]


def class_names(config: TransformConfig, tf_transform_output: tft.TFTransformOutput) -> Optional[list[str]]:
    """The class names in index order, from the transform graph's `label_classes` vocabulary.

    Args:
      config: the label (its `class_names` are used when the graph has no vocabulary, e.g. a user transform).
      tf_transform_output: the Transform output.

    Returns:
      The names, or None for regression.

    Raises:
      ValueError: the vocabulary and the model's head disagree on the number of classes.
    """
    if config.task != "classification":
        return None
    if tf_transform_output.vocabulary_file_by_name(LABEL_CLASSES) is None:
        return config.class_names
    names = [n.decode("utf-8") for n in tf_transform_output.vocabulary_by_name(LABEL_CLASSES)]
    if len(names) != config.num_classes:
        raise ValueError(
            f"the transform graph's `{LABEL_CLASSES}` vocabulary has {len(names)} classes ({names}). Expected "
            f"{config.num_classes}, the classes the pipeline was compiled with ({config.class_names}). Re-run "
            "Transform (the data or the label changed)."
        )
    return names


def class_scores(prediction: tf.Tensor, num_classes: int) -> tf.Tensor:
    """[batch, num_classes] scores from the model's output ([batch, 1] sigmoid or [batch, k] softmax)."""
    if num_classes == 2 and prediction.shape[-1] == 1:
        positive = tf.reshape(prediction, [-1])
        return tf.stack([1.0 - positive, positive], axis=1)
    return tf.reshape(prediction, [-1, num_classes])


def _tiled_names(names: Sequence[str], scores: tf.Tensor) -> tf.Tensor:
    return tf.tile(tf.constant([list(names)]), [tf.shape(scores)[0], 1])


def predict_outputs(prediction: tf.Tensor, names: Sequence[str]) -> dict[str, tf.Tensor]:
    """The Predict outputs of a classification model.

    Args:
      prediction: the model's output.
      names: the class names in index order.

    Returns:
      `scores`, `classes`, `label` (predicted class name); binary models also `probability`.
    """
    scores = class_scores(prediction, len(names))
    outputs = {
        "scores": scores,
        "classes": _tiled_names(names, scores),
        "label": tf.gather(tf.constant(list(names)), tf.argmax(scores, axis=1)),
    }
    if len(names) == 2:
        outputs["probability"] = scores[:, 1]
    return outputs


def classify_outputs(prediction: tf.Tensor, names: Sequence[str]) -> dict[str, tf.Tensor]:
    """The Classify signature's outputs: `classes` (names) and `scores`, one column per class."""
    scores = class_scores(prediction, len(names))
    return {"classes": _tiled_names(names, scores), "scores": scores}


def regression_outputs(prediction: tf.Tensor) -> dict[str, tf.Tensor]:
    """The Predict output of a regression model: `prediction` [batch]."""
    return {"prediction": tf.reshape(prediction, [-1])}
