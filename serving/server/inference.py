"""Predict, Classify and Regress on numpy values, shared by REST and gRPC.

The rules follow TensorFlow Serving: Predict runs any signature; Classify needs
a signature whose method name is `tensorflow/serving/classify`, with one
string input `inputs` (serialized tf.Example) and outputs `classes` and/or
`scores`; Regress needs `tensorflow/serving/regress`, input `inputs` and a
float output `outputs`. The default signature is `serving_default`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import tensorflow as tf

from serving.errors import InvalidArgument, message
from serving.savedmodel import CLASSIFY_METHOD, DEFAULT_SIGNATURE, REGRESS_METHOD
from serving.server.servable import Servable, Signature

__all__ = [
    "EXAMPLES_INPUT",
    "classification_results",
    "classify_signature",
    "filter_outputs",
    "predict_signature",
    "regress_signature",
    "regression_results",
    "require_model_name",
]

EXAMPLES_INPUT = "inputs"
CLASSES_OUTPUT = "classes"
SCORES_OUTPUT = "scores"
REGRESS_OUTPUT = "outputs"


def predict_signature(servable: Servable, signature_name: str) -> Signature:
    """Any signature serves Predict."""
    return servable.signature(signature_name or DEFAULT_SIGNATURE)


def _examples_signature(servable: Servable, signature_name: str, method: str, api: str) -> Signature:
    signature = servable.signature(signature_name or DEFAULT_SIGNATURE)
    if signature.method_name != method:
        raise InvalidArgument(
            message(
                f"Expected {api} signature method_name to be {method}. Was: {signature.method_name}",
                expected=f"a signature exported with method name {method}",
                received=f"signature {signature.name!r} with method {signature.method_name!r}",
                fix=f"Set signature_name to the model's {api} signature, or call :predict instead.",
            )
        )
    spec = signature.inputs.get(EXAMPLES_INPUT)
    if len(signature.inputs) != 1 or spec is None or spec.dtype != tf.string:
        raise InvalidArgument(
            message(
                f"No {api} inputs found in SignatureDef {signature.name!r}",
                expected=f"exactly one string input named {EXAMPLES_INPUT!r} (serialized tf.Example)",
                received=f"inputs {[s.describe() for s in signature.inputs.values()]}",
                fix=f"Export the {api} signature with a single `inputs` string tensor.",
            )
        )
    return signature


def classify_signature(servable: Servable, signature_name: str) -> Signature:
    """Returns a signature that can serve Classify, or raises InvalidArgument."""
    signature = _examples_signature(servable, signature_name, CLASSIFY_METHOD, "classification")
    outputs = signature.outputs
    classes, scores = outputs.get(CLASSES_OUTPUT), outputs.get(SCORES_OUTPUT)
    if (
        (classes is None and scores is None)
        or (classes is not None and classes.dtype != tf.string)
        or (scores is not None and scores.dtype != tf.float32)
    ):
        raise InvalidArgument(
            message(
                "Expected classification signature outputs 'classes' (DT_STRING) and/or 'scores' (DT_FLOAT)",
                expected="at least one of them, with those dtypes",
                received=f"outputs {[s.describe() for s in outputs.values()]}",
                fix="Export `classes` as string labels and `scores` as float32.",
            )
        )
    return signature


def regress_signature(servable: Servable, signature_name: str) -> Signature:
    """Returns a signature that can serve Regress, or raises InvalidArgument."""
    signature = _examples_signature(servable, signature_name, REGRESS_METHOD, "regression")
    spec = signature.outputs.get(REGRESS_OUTPUT)
    if spec is None or spec.dtype != tf.float32:
        raise InvalidArgument(
            message(
                "Expected regression signature output 'outputs' of type DT_FLOAT",
                expected="a float32 output named 'outputs'",
                received=f"outputs {[s.describe() for s in signature.outputs.values()]}",
                fix="Export the regression value as a float32 `outputs` tensor.",
            )
        )
    return signature


def filter_outputs(signature: Signature, outputs: Mapping[str, np.ndarray], wanted: list[str]) -> dict[str, np.ndarray]:
    """Keeps the outputs named in a PredictRequest's output_filter (all if empty: `outputs` itself)."""
    if not wanted:
        return outputs
    unknown = [name for name in wanted if name not in signature.outputs]
    if unknown:
        raise InvalidArgument(
            message(
                f"output tensor alias not found in signature: {', '.join(unknown)}",
                expected=f"aliases in {sorted(signature.outputs)}",
                received=f"output_filter {wanted}",
                fix="Remove the unknown names from output_filter.",
            )
        )
    return {name: outputs[name] for name in wanted}


def _per_example(array: np.ndarray, name: str, count: int) -> np.ndarray:
    if array.ndim == 1:
        array = array.reshape(count, 1) if array.shape[0] == count else array
    if array.ndim != 2 or array.shape[0] != count:
        raise InvalidArgument(
            message(
                f"Expected output Tensor {name!r} shape to be [batch_size, num_classes]",
                expected=f"first dimension {count} (one row per example)",
                received=f"shape {list(array.shape)}",
                fix=f"Make {name!r} batch-major in the exported signature.",
            )
        )
    return array


def classification_results(outputs: Mapping[str, np.ndarray], count: int) -> list[list[tuple[str, float]]]:
    """Turns `classes`/`scores` outputs into per-example (label, score) lists.

    A missing `classes` output gives empty labels, a missing `scores` output
    gives 0.0 scores, as in TensorFlow Serving.
    """
    classes = outputs.get(CLASSES_OUTPUT)
    scores = outputs.get(SCORES_OUTPUT)
    if classes is not None:
        classes = _per_example(classes, CLASSES_OUTPUT, count)
    if scores is not None:
        scores = _per_example(scores, SCORES_OUTPUT, count)
    if classes is not None and scores is not None and classes.shape != scores.shape:
        raise InvalidArgument(
            message(
                "Tensors class and score should match in shape",
                expected="classes and scores of the same shape",
                received=f"classes {list(classes.shape)}, scores {list(scores.shape)}",
                fix="Export one score per class label.",
            )
        )
    width = (classes if classes is not None else scores).shape[1]
    if scores is not None:
        # Shortest decimal of each float32 score, as TensorFlow Serving writes it.
        scores = scores.astype(np.float32).astype(str).astype(np.float64)
    results = []
    for i in range(count):
        row = []
        for j in range(width):
            label = classes[i, j] if classes is not None else b""
            label = label.decode("utf-8", "replace") if isinstance(label, bytes) else str(label)
            row.append((label, float(scores[i, j]) if scores is not None else 0.0))
        results.append(row)
    return results


def regression_results(outputs: Mapping[str, np.ndarray], count: int) -> list[float]:
    """Turns the `outputs` output into one float per example."""
    values = outputs[REGRESS_OUTPUT]
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1 or values.shape[0] != count:
        raise InvalidArgument(
            message(
                "Expected output Tensor shape to be either [batch_size] or [batch_size, 1]",
                expected=f"[{count}] or [{count}, 1]",
                received=f"shape {list(values.shape)}",
                fix="Export one regression value per example.",
            )
        )
    return [float(v) for v in values.astype(np.float32).astype(str).astype(np.float64)]


def require_model_name(name: str) -> None:
    if not name:
        raise InvalidArgument(
            message(
                "Missing model name in request",
                expected="model_spec.name set",
                received="an empty name",
                fix="Set model_spec.name.",
            )
        )
