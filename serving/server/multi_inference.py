"""MultiInference: several Classify/Regress tasks on one input, one model version.

The rules are TensorFlow Serving's (`servables/tensorflow/multi_inference.cc`):
every task names the same model, no signature twice, each task's method is
classify or regress and its signature must serve that method; all tasks run on
the same servable version, and each result carries its task's model spec.
"""

from __future__ import annotations

from tensorflow_serving.apis import inference_pb2

from serving.errors import InvalidArgument, Unimplemented, message
from serving.savedmodel import CLASSIFY_METHOD, DEFAULT_SIGNATURE, REGRESS_METHOD
from serving.server import inference, responses
from serving.server.examples import example_count, examples_from_input
from serving.server.memory import off_loop_if_large
from serving.server.runtime import LARGE_RESULT_EXAMPLES, ModelRef, Runtime

__all__ = ["multi_inference"]


def _check_tasks(request: inference_pb2.MultiInferenceRequest) -> str:
    """Returns the one model name the tasks share, or raises InvalidArgument."""
    if not request.tasks:
        raise InvalidArgument(
            message(
                "MultiInferenceRequest has no tasks",
                expected="at least one task (model_spec and method_name)",
                received="tasks: []",
                fix="Add a classify or regress task to request.tasks.",
            )
        )
    names = [task.model_spec.name for task in request.tasks]
    if not all(names):
        raise InvalidArgument(
            message(
                "Found ModelSpec with an empty model name.",
                expected="model_spec.name set in every task",
                received=f"model names {names}",
                fix="Set model_spec.name in every task.",
            )
        )
    if len(set(names)) > 1:
        raise InvalidArgument(
            message(
                "All ModelSpecs in a MultiInferenceRequest must access the same model name.",
                expected="one model name in every task",
                received=f"model names {names}",
                fix="Send one MultiInferenceRequest per model.",
            )
        )
    seen: set[str] = set()
    for task in request.tasks:
        signature_name = task.model_spec.signature_name or DEFAULT_SIGNATURE
        if signature_name in seen:
            raise InvalidArgument(
                message(
                    f"Duplicate evaluation of signature: {signature_name}",
                    expected="each signature at most once",
                    received=f"signature {signature_name!r} in two tasks",
                    fix="Remove the repeated task.",
                )
            )
        seen.add(signature_name)
        if task.method_name not in (CLASSIFY_METHOD, REGRESS_METHOD):
            raise Unimplemented(
                message(
                    f"Unsupported signature method_name: {task.method_name}",
                    expected=f"{CLASSIFY_METHOD!r} or {REGRESS_METHOD!r}",
                    received=repr(task.method_name),
                    fix="Use Predict for predict signatures; set method_name to classify or regress.",
                )
            )
    return names[0]


def _model_ref(request: inference_pb2.MultiInferenceRequest, name: str) -> ModelRef:
    spec = request.tasks[0].model_spec
    return ModelRef(name, spec.version.value if spec.HasField("version") else None, spec.version_label or None)


def _fill_result(result: inference_pb2.InferenceResult, method_name: str, outputs, count: int) -> None:
    """Writes one task's per-example classes or values into its result (a Python loop per example)."""
    if method_name == CLASSIFY_METHOD:
        responses.fill_classifications(result.classification_result, inference.classification_results(outputs, count))
    else:
        responses.fill_regressions(result.regression_result, inference.regression_results(outputs, count))


async def multi_inference(
    runtime: Runtime, request: inference_pb2.MultiInferenceRequest
) -> tuple[int, inference_pb2.MultiInferenceResponse]:
    """Runs every task of `request` on one servable version.

    Args:
        runtime: The server's runtime (manager, batching, inference threads).
        request: The gRPC MultiInferenceRequest.

    Returns:
        (the version that served it, the response with one result per task).

    Raises:
        ServingError: Bad tasks (INVALID_ARGUMENT/UNIMPLEMENTED), an unknown
            model or signature (NOT_FOUND), a failure inside the model.
    """
    name = _check_tasks(request)
    # Hundreds of thousands of examples are seconds of Python work: off the loop, as for Classify.
    large = example_count(request.input) >= LARGE_RESULT_EXAMPLES
    examples = await off_loop_if_large(large, examples_from_input, request.input)
    ref = _model_ref(request, name)
    response = inference_pb2.MultiInferenceResponse()
    with runtime.manager.handle(ref.name, ref.version, ref.label) as servable:
        for task in request.tasks:
            result = response.results.add()
            if task.method_name == CLASSIFY_METHOD:
                signature = inference.classify_signature(servable, task.model_spec.signature_name)
            else:
                signature = inference.regress_signature(servable, task.model_spec.signature_name)
            outputs = await runtime.run(servable, signature, {inference.EXAMPLES_INPUT: examples})
            await off_loop_if_large(large, _fill_result, result, task.method_name, outputs, len(examples))
            result.model_spec.name = name
            result.model_spec.version.value = servable.version
            result.model_spec.signature_name = task.model_spec.signature_name
        return servable.version, response
