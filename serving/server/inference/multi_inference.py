"""MultiInference: several Classify/Regress tasks on one input, one model version.

The rules are TensorFlow Serving's (`servables/tensorflow/multi_inference.cc`):
every task names the same model, no signature twice, each task's method is
classify or regress and its signature must be shaped for that method (its own
method name is not checked: TensorFlow Serving's default); all tasks run on
the same servable version, and each result carries its task's model spec,
the signature name filled in.
"""

from __future__ import annotations

from tensorflow_serving.apis import inference_pb2

from serving.errors import InvalidArgument, Unimplemented, message
from serving.savedmodel import CLASSIFY_METHOD, DEFAULT_SIGNATURE, REGRESS_METHOD
from serving.server.guards.memory import off_loop_if_large
from serving.server.inference import methods as inference
from serving.server.inference.runtime import LARGE_RESULT_EXAMPLES, ModelRef, Runtime
from serving.server.model.servable import Servable, Signature
from serving.server.wire import responses
from serving.server.wire.examples import example_count, examples_from_input

__all__ = ["check_tasks", "fill_result", "multi_inference", "task_signatures"]


def check_tasks(request: inference_pb2.MultiInferenceRequest) -> str:
    """Returns the one model name the tasks share, or raises InvalidArgument.

    TensorFlow Serving's order, task by task: an empty model name, a second
    model name, a signature named twice. (Each task's signature and method
    are checked on the servable: `task_signatures`.)
    """
    if not request.tasks:
        raise InvalidArgument(
            message(
                # TensorFlow Serving's words (its check of the first task's ModelSpec), then the cause.
                "ModelSpec has no name specified. The MultiInferenceRequest has no tasks",
                expected="at least one task (model_spec and method_name)",
                received="tasks: []",
                fix="Add a classify or regress task to request.tasks.",
            )
        )
    names = [task.model_spec.name for task in request.tasks]
    seen: set[str] = set()
    for task in request.tasks:
        if not task.model_spec.name:
            raise InvalidArgument(
                message(
                    "Found ModelSpec with an empty model name.",
                    expected="model_spec.name set in every task",
                    received=f"model names {names}",
                    fix="Set model_spec.name in every task.",
                )
            )
        if task.model_spec.name != names[0]:
            raise InvalidArgument(
                message(
                    "All ModelSpecs in a MultiInferenceRequest must access the same model name.",
                    expected="one model name in every task",
                    received=f"model names {names}",
                    fix="Send one MultiInferenceRequest per model.",
                )
            )
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
    return names[0]


def task_signatures(servable: Servable, request: inference_pb2.MultiInferenceRequest) -> list[Signature]:
    """Each task's signature on `servable`, checked for the task's method.

    Raises:
        InvalidArgument: A task names a signature the servable does not have (as TensorFlow Serving).
        Unimplemented: A task's method is neither classify nor regress.
        InvalidArgument: A signature is not shaped for its task's method.
    """
    signatures = []
    for task in request.tasks:
        signature_name = task.model_spec.signature_name
        # INVALID_ARGUMENT, TensorFlow Serving's MultiInference words first (multi_inference.cc).
        servable.signature(signature_name or DEFAULT_SIGNATURE, "Requested signature not found in model graph: {name}")
        if task.method_name == CLASSIFY_METHOD:
            signatures.append(inference.classify_signature(servable, signature_name))
        elif task.method_name == REGRESS_METHOD:
            signatures.append(inference.regress_signature(servable, signature_name))
        else:
            raise Unimplemented(
                message(
                    f"Unsupported signature method_name: {task.method_name}",
                    expected=f"{CLASSIFY_METHOD!r} or {REGRESS_METHOD!r}",
                    received=repr(task.method_name),
                    fix="Use Predict for predict signatures; set method_name to classify or regress.",
                )
            )
    return signatures


def fill_result(
    result: inference_pb2.InferenceResult,
    task: inference_pb2.InferenceTask,
    version: int,
    outputs,
    count: int,
) -> None:
    """Writes one task's per-example classes or values and its model spec into `result`.

    The model spec is TensorFlow Serving's `MakeModelSpec`: the task's model
    name, the signature name (`serving_default` when the task left it empty)
    and the version that ran.
    """
    if task.method_name == CLASSIFY_METHOD:
        responses.fill_classifications(result.classification_result, inference.classification_results(outputs, count))
    else:
        responses.fill_regressions(result.regression_result, inference.regression_results(outputs, count))
    result.model_spec.name = task.model_spec.name
    result.model_spec.version.value = version
    result.model_spec.signature_name = task.model_spec.signature_name or DEFAULT_SIGNATURE


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
            model or signature (NOT_FOUND), an empty input, a failure inside
            the model.
    """
    if not request.tasks or not request.tasks[0].model_spec.name:
        check_tasks(request)  # raises: no tasks, or the first task names no model
    # The servable it runs on: the first task's model spec (TensorFlow Serving's helper).
    ref = ModelRef.of_model_spec(request.tasks[0].model_spec)
    response = inference_pb2.MultiInferenceResponse()
    # TensorFlow Serving resolves the first task's model first (NOT_FOUND), then checks the tasks.
    with runtime.manager.handle(ref.name, ref.version, ref.label) as servable:
        check_tasks(request)
        signatures = task_signatures(servable, request)  # before the input, as TensorFlow Serving
        # Hundreds of thousands of examples are seconds of Python work: off the loop, as for Classify.
        large = example_count(request.input) >= LARGE_RESULT_EXAMPLES
        examples = await off_loop_if_large(large, examples_from_input, request.input)
        for task, signature in zip(request.tasks, signatures):
            outputs = await runtime.run(servable, signature, {inference.EXAMPLES_INPUT: examples})
            result = response.results.add()
            await off_loop_if_large(large, fill_result, result, task, servable.version, outputs, len(examples))
        return servable.version, response
