"""The trivial model a candidate must beat when the spec declares no thresholds.

Classification: predicting the majority class (its share of the eval split is
the accuracy to beat); a binary label that declares `auc` must beat chance
(AUC 0.5), which needs no pass over the data. Regression: predicting the mean
of the eval split's labels (their variance is the mean squared error to beat).

The labels are the transformed ones (`transform_features` of the candidate
model), so a label `expression` or a class vocabulary counts as it trains.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np

from components.evaluator.eval_config import Baseline, EvaluationRequest, num_classes_of

__all__ = ["choose_baseline", "read_eval_labels", "read_label_classes", "serving_model_dir"]

_BATCH = 4096


def serving_model_dir(model_uri: str) -> str:
    """The SavedModel folder inside a Trainer's `model` artifact."""
    from tfx.utils import path_utils

    return path_utils.serving_model_path(model_uri)


def read_label_classes(model_uri: str) -> Optional[list[str]]:
    """The label's class names in index order (the `label_classes` vocabulary asset), or None without one."""
    path = os.path.join(serving_model_dir(model_uri), "assets", "label_classes")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.rstrip("\n")]


def read_eval_labels(model_uri: str, split_uri: str, label_key: str) -> np.ndarray:
    """The transformed labels of every example under `split_uri`, in one pass.

    Args:
      model_uri: the candidate `Model` artifact (its `transform_features` signature gives the labels).
      split_uri: the folder of the eval split's TFRecord files (GZIP or not).
      label_key: the transformed label's name.

    Returns:
      The labels as a 1-D numpy array.

    Raises:
      ValueError: the split holds no files, or the signature does not output `label_key`.
    """
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(split_uri, "*")))
    if not files:
        raise ValueError(
            f"the eval split {split_uri} holds no files. Expected TFRecord files from ExampleGen. "
            "Check that the `eval` split has a weight in `data.splits`."
        )
    transform = tf.saved_model.load(serving_model_dir(model_uri)).signatures["transform_features"]
    (examples_input,) = transform.structured_input_signature[1]  # `examples`, unless a column has that name
    compression = "GZIP" if files[0].endswith(".gz") else ""
    labels = []
    for batch in tf.data.TFRecordDataset(files, compression_type=compression).batch(_BATCH):
        outputs = transform(**{examples_input: batch})
        if label_key not in outputs:
            raise ValueError(
                f"the model's `transform_features` does not output the label `{label_key}`. "
                f"Received outputs: {sorted(outputs)}. Check `label.name` in the spec."
            )
        labels.append(tf.reshape(outputs[label_key], [-1]).numpy())
    return np.concatenate(labels) if labels else np.zeros([0])


def choose_baseline(
    request: EvaluationRequest, classes: Optional[Sequence[str]], labels: Callable[[], np.ndarray]
) -> Baseline:
    """The trivial baseline for a spec without thresholds.

    Args:
      request: the spec's evaluation request (task, metrics).
      classes: the label's classes in index order, or None (binary or regression).
      labels: reads the eval split's transformed labels; called only when the baseline needs them.

    Returns:
      The `Baseline` (metric, value, what it is) the candidate must beat.

    Raises:
      ValueError: the eval split holds no labels.
    """
    num_classes = num_classes_of(request, classes)
    if request.task == "classification" and num_classes <= 2 and "auc" in request.metrics:
        return Baseline(metric="auc", value=0.5, name="chance-level baseline")
    values = labels()
    if values.size == 0:
        raise ValueError(
            "the eval split holds no examples, so no baseline can be computed. Expected at least one row. "
            "Give the `eval` split more weight in `data.splits` or add data."
        )
    if request.task == "regression":
        values = values.astype(np.float64)
        return Baseline(
            metric="mean_squared_error",
            value=float(np.mean((values - values.mean()) ** 2)),
            name="mean baseline",
            note=f"the mean label is {values.mean():.4g}",
        )
    _, counts = np.unique(values, return_counts=True)
    share = float(counts.max() / counts.sum())
    metric = "binary_accuracy" if num_classes <= 2 and "binary_accuracy" in request.metrics else "accuracy"
    note = "its labels hold one class only, so no model can beat this baseline" if len(counts) == 1 else ""
    return Baseline(metric=metric, value=share, name="majority-class baseline", note=note)
