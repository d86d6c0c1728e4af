"""Predict, Classify and Regress on numpy values, shared by REST and gRPC.

The rules follow TensorFlow Serving with its default flags
(`--enable_signature_method_name_check=false`): Predict runs any signature;
Classify and Regress run any signature shaped for them, whatever its method
name (TF2's `tf.saved_model.save` writes `tensorflow/serving/predict` on every
signature). A Classify signature has one input `inputs` (serialized
tf.Example strings) and one or two outputs, among them `classes` and/or
`scores`; a Regress signature has one input `inputs` and one output
`outputs`. The outputs are checked after the run, as TensorFlow Serving's
`PostProcessClassificationResult`/`PostProcessRegressionResult` check them:
rank, dtype, batch size, in that order and with its wording. The default
signature is `serving_default`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from serving.errors import FailedPrecondition, InvalidArgument, did_you_mean, message
from serving.savedmodel import CLASSIFY_METHOD, DEFAULT_SIGNATURE, REGRESS_METHOD
from serving.server.model.servable import Servable, Signature
from serving.server.wire.json_outputs import float32_json_values
from serving.server.wire.tensor_checks import FoundByTheSession, check_inputs, datatype_name, shape_text

__all__ = [
    "EXAMPLES_INPUT",
    "classification_results",
    "classify_signature",
    "check_output_filter",
    "checked_inputs",
    "predict_signature",
    "regress_signature",
    "regression_results",
    "require_model_name",
]

EXAMPLES_INPUT = "inputs"
CLASSES_OUTPUT = "classes"
SCORES_OUTPUT = "scores"
REGRESS_OUTPUT = "outputs"
_FOR_METHOD = {"classification": CLASSIFY_METHOD, "regression": REGRESS_METHOD}


_CLASSIFY_REGRESS_NOT_FOUND = "No signature was found with the name: {name}"  # classifier.cc, regressor.cc


def predict_signature(servable: Servable, signature_name: str, over_grpc: bool = False) -> Signature:
    """Any signature serves Predict, whatever its method name (as in TensorFlow Serving).

    A missing one is TensorFlow Serving's answer: over REST its `GetInfoMap`
    (INVALID_ARGUMENT), over gRPC its `predict_util.cc` (FAILED_PRECONDITION).
    """
    if over_grpc:
        return servable.signature(
            signature_name or DEFAULT_SIGNATURE, 'Serving signature key "{name}" not found', FailedPrecondition
        )
    return servable.signature(signature_name or DEFAULT_SIGNATURE)


def _shape_error(signature: Signature, api: str, problem: str, expected: str) -> InvalidArgument:
    """A signature not shaped for `api`: TensorFlow Serving's wording, then ours."""
    method = _FOR_METHOD[api]
    hint = (
        f" Signature {signature.name!r} was exported with method name {signature.method_name!r}: "
        f"call :predict on it, or set signature_name to a {api} signature."
        if signature.method_name != method
        else ""
    )
    return InvalidArgument(
        message(
            problem,
            expected=expected,
            received=f"signature {signature.name!r}: inputs {[s.describe() for s in signature.inputs.values()]}, "
            f"outputs {[s.describe() for s in signature.outputs.values()]}",
            fix=f"Export the {api} signature with those inputs and outputs." + hint,
        )
    )


def classify_signature(servable: Servable, signature_name: str) -> Signature:
    """Returns a signature that can serve Classify, or raises InvalidArgument.

    TensorFlow Serving's `PreProcessClassification`: one input, one or two
    outputs, the input named `inputs`, an output named `classes` or `scores`.
    """
    signature = servable.signature(signature_name or DEFAULT_SIGNATURE, _CLASSIFY_REGRESS_NOT_FOUND)
    api, expected = "classification", "one string input 'inputs' and outputs 'classes' and/or 'scores'"
    if len(signature.inputs) != 1:
        raise _shape_error(signature, api, "Expected one input Tensor.", expected)
    if len(signature.outputs) not in (1, 2):
        raise _shape_error(
            signature, api, f"Expected one or two output Tensors, found {len(signature.outputs)}", expected
        )
    if EXAMPLES_INPUT not in signature.inputs:
        raise _shape_error(
            signature, api, f"No classification inputs found in SignatureDef {signature.name!r}", expected
        )
    if CLASSES_OUTPUT not in signature.outputs and SCORES_OUTPUT not in signature.outputs:
        raise _shape_error(
            signature,
            api,
            'Expected classification signature outputs to contain at least one of "classes" or "scores"',
            expected,
        )
    return signature


def regress_signature(servable: Servable, signature_name: str) -> Signature:
    """Returns a signature that can serve Regress, or raises InvalidArgument.

    TensorFlow Serving's `PreProcessRegression`: one input named `inputs`,
    one output named `outputs`.
    """
    signature = servable.signature(signature_name or DEFAULT_SIGNATURE, _CLASSIFY_REGRESS_NOT_FOUND)
    api, expected = "regression", "one string input 'inputs' and one output 'outputs'"
    if len(signature.inputs) != 1:
        raise _shape_error(signature, api, "Expected one input Tensor.", expected)
    if len(signature.outputs) != 1:
        raise _shape_error(signature, api, "Expected one output Tensor.", expected)
    if EXAMPLES_INPUT not in signature.inputs:
        raise _shape_error(signature, api, f"No regression inputs found in SignatureDef {signature.name!r}", expected)
    if REGRESS_OUTPUT not in signature.outputs:
        raise _shape_error(signature, api, f"No regression outputs found in SignatureDef {signature.name!r}", expected)
    return signature


def check_output_filter(signature: Signature, wanted: list[str]) -> None:
    """A PredictRequest's output_filter, checked before the model runs (TensorFlow Serving's
    `PreProcessPrediction`: alias by alias, the first problem reported).

    Raises:
        InvalidArgument: An alias is not an output of the signature, or is named twice.
    """
    seen: set[str] = set()
    for alias in wanted:
        if alias not in signature.outputs:
            expected = ",".join(sorted(signature.outputs))
            raise InvalidArgument(
                message(
                    f"output tensor alias not found in signature: {alias} Outputs expected to be in the set "
                    f"{{{expected}}}.",
                    expected=f"aliases in {sorted(signature.outputs)}",
                    received=f"output_filter {wanted}",
                    fix="Remove the unknown names from output_filter." + did_you_mean(alias, signature.outputs),
                )
            )
        if alias in seen:
            raise InvalidArgument(
                message(
                    f"duplicate output tensor alias: {alias}",
                    expected="each alias at most once",
                    received=f"output_filter {wanted}",
                    fix="Remove the repeated names from output_filter.",
                )
            )
        seen.add(alias)


def checked_inputs(
    signature: Signature,
    build_inputs: Callable[[Signature], Mapping[str, np.ndarray]],
    output_filter: list[str] | None,
    model: str,
) -> dict[str, np.ndarray]:
    """A Predict's inputs, checked in TensorFlow Serving's order (`PreProcessPrediction`,
    predict_util.cc): aliases and TensorProto parsing, then the output filter, then what its
    session finds when it runs (a dtype, a shape). A bad filter runs nothing.
    """
    try:
        inputs = check_inputs(signature, build_inputs(signature), model)
    except FoundByTheSession:
        if output_filter:
            check_output_filter(signature, output_filter)
        raise
    if output_filter:
        check_output_filter(signature, output_filter)
    return inputs


def _output_error(problem: str, expected: str, array: np.ndarray, name: str) -> InvalidArgument:
    return InvalidArgument(
        message(
            problem,
            expected=expected,
            received=f"output {name!r} of dtype {datatype_name(array.dtype)} and shape {shape_text(array.shape)}",
            fix=f"Export {name!r} with that dtype and shape (one row per example).",
        )
    )


def _check_class_output(array: np.ndarray | None, name: str, dtype: str, count: int) -> None:
    """TensorFlow Serving's checks on `classes`/`scores`: rank 2, dtype, one row per example."""
    if array is None:
        return
    if array.ndim != 2:
        raise _output_error(
            f"Expected Tensor shape: [batch_size num_classes] but got {shape_text(array.shape)}",
            "a rank-2 tensor [batch_size, num_classes]",
            array,
            name,
        )
    if datatype_name(array.dtype) != dtype:
        raise _output_error(
            f"Expected {name} Tensor of {dtype}. Got: {datatype_name(array.dtype)}", f"dtype {dtype}", array, name
        )
    if array.shape[0] != count:
        raise _output_error(
            f"Expected {name} output batch size of {count}. Got: {array.shape[0]}",
            f"one row per example ({count})",
            array,
            name,
        )


def classification_results(outputs: Mapping[str, np.ndarray], count: int) -> list[list[tuple[str, float]]]:
    """Turns `classes`/`scores` outputs into per-example (label, score) lists.

    A missing `classes` output gives empty labels, a missing `scores` output
    gives 0.0 scores, as in TensorFlow Serving.

    Raises:
        InvalidArgument: An output is not rank 2, has the wrong dtype (classes
            DT_STRING, scores DT_FLOAT) or batch size, or classes and scores
            differ in their number of classes.
    """
    classes = outputs.get(CLASSES_OUTPUT)
    scores = outputs.get(SCORES_OUTPUT)
    _check_class_output(classes, CLASSES_OUTPUT, "DT_STRING", count)
    _check_class_output(scores, SCORES_OUTPUT, "DT_FLOAT", count)
    if classes is not None and scores is not None and classes.shape[1] != scores.shape[1]:
        raise InvalidArgument(
            message(
                f"Tensors class and score should match in dim_size(1). Got {classes.shape[1]} vs. {scores.shape[1]}",
                expected="one score per class label",
                received=f"classes {shape_text(classes.shape)}, scores {shape_text(scores.shape)}",
                fix="Export `classes` and `scores` with the same number of columns.",
            )
        )
    width = (classes if classes is not None else scores).shape[1]
    if scores is not None:
        # Each float32 score as TensorFlow Serving writes it in JSON (the same float32 over gRPC).
        scores = float32_json_values(scores.astype(np.float32))
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
    """Turns the `outputs` output into one float per example.

    Raises:
        InvalidArgument: TensorFlow Serving's checks, in its order: shape
            [batch_size] or [batch_size, 1], batch size, dtype DT_FLOAT.
    """
    values = outputs[REGRESS_OUTPUT]
    if not (values.ndim == 1 or (values.ndim == 2 and values.shape[1] == 1)):
        raise _output_error(
            f"Expected output Tensor shape to be either [batch_size] or [batch_size, 1] but got {shape_text(values.shape)}",
            f"[{count}] or [{count}, 1]",
            values,
            REGRESS_OUTPUT,
        )
    if values.shape[0] != count:
        raise _output_error(
            f"Input batch size did not match output batch size: {count} vs. {values.shape[0]}",
            f"one value per example ({count})",
            values,
            REGRESS_OUTPUT,
        )
    if datatype_name(values.dtype) != "DT_FLOAT":
        raise _output_error(
            f"Expected output Tensor of DT_FLOAT.  Got: {datatype_name(values.dtype)}",
            "dtype DT_FLOAT",
            values,
            REGRESS_OUTPUT,
        )
    return float32_json_values(values.reshape(count).astype(np.float32)).tolist()


def require_model_name(name: str) -> None:
    """TF Serving's `ServerCore::ServableRequestFromModelSpec` check, in its words."""
    if not name:
        raise InvalidArgument(
            message(
                "ModelSpec has no name specified",
                expected="model_spec.name set",
                received="an empty name",
                fix="Set model_spec.name.",
            )
        )
