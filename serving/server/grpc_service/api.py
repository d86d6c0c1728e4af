"""The gRPC API: TensorFlow Serving's PredictionService and ModelService.

Implemented on the servicer classes generated in tensorflow-serving-api, on a
`grpc.aio` server sharing the REST server's event loop, so both front ends
share one runtime and one batch scheduler. (grpcio's threaded server, handing
each call to the loop, costs more CPU per request.)
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence

import grpc
from google.protobuf.message import Message
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    inference_pb2,
    model_management_pb2,
    model_service_pb2_grpc,
    predict_pb2,
    prediction_service_pb2_grpc,
    regression_pb2,
)

from serving.config import ConfigError
from serving.errors import Internal, InvalidArgument, ServingError, echoed, message
from serving.server.grpc_service.accepts import ConcurrentAccepts
from serving.server.grpc_service.handlers import Undecodable, add_servicer
from serving.server.guards.memory import MemoryReleaser, off_loop_if_large
from serving.server.guards.request_checks import RequestLimits, check_input_count, check_tensor_protos
from serving.server.inference.multi_inference import multi_inference
from serving.server.inference.runtime import LARGE_RESULT_EXAMPLES, ModelRef, Result, Runtime
from serving.server.lifecycle.reload_policy import ReloadPolicy
from serving.server.observability.metrics import GRPC, ServingMetrics
from serving.server.wire import responses
from serving.server.wire.examples import example_count, examples_from_input
from serving.server.wire.predict_wire import PredictRequestEntries, input_protos, predict_response_bytes
from serving.server.wire.tensor_protos import proto_inputs

__all__ = ["ModelServicer", "PredictionServicer", "health_service", "parse_channel_arguments", "start_grpc_server"]

log = logging.getLogger(__name__)


# Each service's methods as (request, response) classes, as the generated `add_*_to_server` register them.
PREDICTION_SERVICE = "tensorflow.serving.PredictionService"
PREDICTION_METHODS = {
    "Classify": (classification_pb2.ClassificationRequest, classification_pb2.ClassificationResponse),
    "Regress": (regression_pb2.RegressionRequest, regression_pb2.RegressionResponse),
    "Predict": (predict_pb2.PredictRequest, predict_pb2.PredictResponse),
    "MultiInference": (inference_pb2.MultiInferenceRequest, inference_pb2.MultiInferenceResponse),
    "GetModelMetadata": (
        get_model_metadata_pb2.GetModelMetadataRequest,
        get_model_metadata_pb2.GetModelMetadataResponse,
    ),
}
MODEL_SERVICE = "tensorflow.serving.ModelService"
MODEL_METHODS = {
    "GetModelStatus": (get_model_status_pb2.GetModelStatusRequest, get_model_status_pb2.GetModelStatusResponse),
    "HandleReloadConfigRequest": (model_management_pb2.ReloadConfigRequest, model_management_pb2.ReloadConfigResponse),
}

# The `API` label TensorFlow Serving's PredictionServiceImpl records, by our api name.
_COUNTED_APIS = {"predict": "Predict", "classify": "Classify", "regress": "Regress"}


def _require_model_spec(request) -> None:
    """TensorFlow Serving's first check of Predict, Classify, Regress, GetModelMetadata and GetModelStatus."""
    if not request.HasField("model_spec"):
        raise InvalidArgument(
            message(
                "Missing ModelSpec",
                expected="model_spec with the name of a served model",
                received=f"a {type(request).__name__} without model_spec",
                fix="Set model_spec.name (and optionally model_spec.version or version_label).",
            )
        )


def _classification_response(ref: ModelRef, result: Result) -> classification_pb2.ClassificationResponse:
    response = classification_pb2.ClassificationResponse()
    responses.fill_model_spec(response.model_spec, ref.name, result.version, result.signature_name)
    responses.fill_classifications(response.result, result.outputs["results"])
    return response


def _regression_response(ref: ModelRef, result: Result) -> regression_pb2.RegressionResponse:
    response = regression_pb2.RegressionResponse()
    responses.fill_model_spec(response.model_spec, ref.name, result.version, result.signature_name)
    responses.fill_regressions(response.result, result.outputs["results"])
    return response


# The most bytes an error message may take in the grpc-message trailer, percent-encoded as gRPC sends
# it. A client refuses trailers over its metadata limit (8 KiB soft, 16 KiB hard by default) and
# reports RESOURCE_EXHAUSTED in place of the server's status.
_MAX_DETAILS_BYTES = 4096


def _bounded_details(text: str) -> str:
    """`text` cut to fit `_MAX_DETAILS_BYTES` once percent-encoded (the start, TF Serving's words, kept)."""
    if len(text) * 9 <= _MAX_DETAILS_BYTES:  # at most 9 encoded bytes a character
        return text
    size = 0
    for end, char in enumerate(text):
        size += 1 if " " <= char <= "~" and char != "%" else 3 * len(char.encode("utf-8", "replace"))
        if size > _MAX_DETAILS_BYTES - 64:  # room for the mark
            return f"{text[:end]}...(message cut at {end} of {len(text)} characters)"
    return text


def _grpc_method(api: str, work: Callable[[_Servicer, Message], Awaitable[tuple[int | None, object]]]):
    """A servicer method that runs `work(self, request)` and answers with its
    response, or aborts with its error as a gRPC status.

    The method is `work`'s only caller, so a call suspends and resumes through
    two coroutine frames (this one, `work`) besides the runtime's. A request
    that did not parse (`Undecodable`) is INTERNAL, as C++ gRPC answers it, and is not counted:
    TensorFlow Serving never sees one. TensorFlow Serving counts Predict,
    Classify and Regress over gRPC (`_COUNTED_APIS`).
    """
    counted = _COUNTED_APIS.get(api)

    async def method(self: _Servicer, request, context: grpc.aio.ServicerContext):
        if request.__class__ is Undecodable:
            await context.abort(grpc.StatusCode.INTERNAL, request.error_text())
        started = time.perf_counter()
        try:
            _, response = await work(self, request)
        except ServingError as err:
            error = err
            reason = getattr(err, "reason", None)
            if reason:
                self.metrics.reject(GRPC, reason)
        except Exception as err:  # noqa: BLE001 - the server stays up and answers INTERNAL
            log.exception("Unhandled error in %s", api)
            error = Internal(f"{type(err).__name__}: {err}")
        else:
            if counted:
                self.metrics.observe_request(
                    model=request.model_spec.name,
                    api=counted,
                    entrypoint=GRPC,
                    status="OK",
                    seconds=time.perf_counter() - started,
                )
            return response
        if counted:
            self.metrics.observe_request(
                model=request.model_spec.name,
                api=counted,
                entrypoint=GRPC,
                status=error.code_name,
                seconds=time.perf_counter() - started,
            )
        await context.abort(error.code, _bounded_details(error.text))

    method.__name__ = method.__qualname__ = f"{api}_method"
    return method


class _Servicer:
    def __init__(
        self,
        runtime: Runtime,
        metrics: ServingMetrics,
        *,
        limits: RequestLimits | None = None,
        memory: MemoryReleaser | None = None,
        reload_policy: ReloadPolicy | None = None,
    ) -> None:
        self.runtime = runtime
        self.metrics = metrics
        self.limits = limits or RequestLimits()
        self.memory = memory
        self.reload_policy = reload_policy or ReloadPolicy()


class PredictionServicer(_Servicer, prediction_service_pb2_grpc.PredictionServiceServicer):
    """Predict, Classify, Regress, MultiInference and GetModelMetadata."""

    async def _predict(self, request):
        _require_model_spec(request)
        spec = request.model_spec
        ref = ModelRef.of_model_spec(spec)
        check_input_count(len(request.inputs))  # before they are walked
        inputs = input_protos(request)
        declared = check_tensor_protos(inputs, self.limits)  # before anything is decoded
        output_filter = request.output_filter
        try:
            result = await self.runtime.predict(
                ref,
                spec.signature_name,
                lambda signature: proto_inputs(inputs, signature, ref.name),
                list(output_filter) if output_filter else None,
                may_run_on_loop=True,
                over_grpc=True,
            )
        finally:
            if self.memory is not None:
                self.memory.after(declared)  # trims 0.2 s later, once the answer is out
        return result.version, predict_response_bytes(ref.name, result.version, result.signature_name, result.outputs)

    async def _on_examples(self, request, run, build_response):
        """Classify or Regress: the request's examples through `run`, answered by `build_response`."""
        _require_model_spec(request)
        ref = ModelRef.of_model_spec(request.model_spec)
        large = example_count(request.input) >= LARGE_RESULT_EXAMPLES
        examples = await off_loop_if_large(large, examples_from_input, request.input)
        result = await run(ref, request.model_spec.signature_name, examples)
        return result.version, await off_loop_if_large(large, build_response, ref, result)

    async def _classify(self, request):
        return await self._on_examples(request, self.runtime.classify, _classification_response)

    async def _regress(self, request):
        return await self._on_examples(request, self.runtime.regress, _regression_response)

    async def _multi_inference(self, request):
        return await multi_inference(self.runtime, request)

    async def _metadata(self, request):
        _require_model_spec(request)
        responses.check_metadata_fields(list(request.metadata_field))
        ref = ModelRef.of_model_spec(request.model_spec)
        with self.runtime.manager.handle(ref.name, ref.version, ref.label) as servable:
            return servable.version, responses.metadata_response(servable)

    Predict = _grpc_method("predict", _predict)
    Classify = _grpc_method("classify", _classify)
    Regress = _grpc_method("regress", _regress)
    MultiInference = _grpc_method("MultiInference", _multi_inference)
    GetModelMetadata = _grpc_method("metadata", _metadata)


class ModelServicer(_Servicer, model_service_pb2_grpc.ModelServiceServicer):
    """GetModelStatus and HandleReloadConfigRequest."""

    async def _status(self, request):
        _require_model_spec(request)
        ref = ModelRef.of_model_spec(request.model_spec)
        statuses = self.runtime.manager.status(ref.name, ref.version)  # any label ignored, as TF Serving
        return ref.version, responses.status_response(statuses)

    async def _reload(self, request):
        self.reload_policy.check(request.config)
        # The manager's lock may be held by a load: wait off the loop.
        await asyncio.get_running_loop().run_in_executor(None, self.runtime.manager.reload, request.config)
        response = model_management_pb2.ReloadConfigResponse()
        response.status.error_code = 0
        return None, response

    GetModelStatus = _grpc_method("status", _status)
    HandleReloadConfigRequest = _grpc_method("reload", _reload)


async def start_grpc_server(
    runtime: Runtime,
    metrics: ServingMetrics,
    *,
    address: str | None,
    max_message_bytes: int,
    limits: RequestLimits | None = None,
    memory: MemoryReleaser | None = None,
    reload_policy: ReloadPolicy | None = None,
    socket_path: str | None = None,
    channel_arguments: Sequence[tuple[str, int | str]] = (),
    health: object | None = None,
) -> tuple[grpc.aio.Server, int, ConcurrentAccepts]:
    """Starts the gRPC server on `address` (call on the server's loop).

    Args:
        runtime: The inference path.
        metrics: Where requests are counted.
        address: "host:port" to bind; None: only `socket_path`.
        max_message_bytes: Largest message in either direction.
        limits: Per-request memory budget.
        memory: Gives memory back after large requests.
        reload_policy: Whether and where HandleReloadConfigRequest may point models;
            refused when None.
        socket_path: Also listen on this UNIX socket (`--grpc_socket_path`).
        channel_arguments: gRPC server arguments (`--grpc_channel_arguments`,
            `parse_channel_arguments`); they replace this server's own of the same key.
        health: A `grpc.health.v1` servicer to serve (`health_service`), or None.

    Returns:
        The server, the bound port (0 when only `address` is None and the socket listens),
        and the loops accepting Predict calls.

    Raises:
        OSError: The address cannot be bound.
    """
    options = {
        "grpc.max_receive_message_length": max_message_bytes,
        "grpc.max_send_message_length": max_message_bytes,
        "grpc.so_reuseport": 0,
    }
    options.update(dict(channel_arguments))
    server = grpc.aio.server(options=list(options.items()))
    extras = {"limits": limits, "memory": memory, "reload_policy": reload_policy}
    # As the generated add_*Servicer_to_server, but an unparsable request is INVALID_ARGUMENT, not UNKNOWN.
    prediction = add_servicer(
        server,
        PREDICTION_SERVICE,
        PredictionServicer(runtime, metrics, **extras),
        PREDICTION_METHODS,
        parse_as={"Predict": PredictRequestEntries},  # the same bytes, without building the inputs map
    )
    add_servicer(server, MODEL_SERVICE, ModelServicer(runtime, metrics, **extras), MODEL_METHODS)
    if health is not None:
        from grpc_health.v1 import health_pb2_grpc

        health_pb2_grpc.add_HealthServicer_to_server(health, server)
    # Predict calls accepted several at a time (grpc.aio's loop accepts one per round trip).
    accepts = ConcurrentAccepts.register(server, PREDICTION_SERVICE, {"Predict": prediction["Predict"]})
    port = 0
    for where in [address, f"unix:{socket_path}" if socket_path else None]:
        if where is None:
            continue
        try:
            bound = server.add_insecure_port(where)
        except RuntimeError as err:  # grpcio raises instead of returning 0 on bind failure
            raise OSError(f"Could not bind gRPC to {where}: {err}") from None
        if not bound:
            raise OSError(f"Could not bind gRPC to {where}")
        port = port or (bound if where == address else 0)
    await server.start()
    accepts.start()
    return server, port, accepts


def parse_channel_arguments(text: str) -> list[tuple[str, int | str]]:
    """`--grpc_channel_arguments` as TensorFlow Serving reads it (server.cc `parseGrpcChannelArgs`):
    comma-separated `key=value`, a value that parses as a 32-bit integer passed as one, else as text.

    >>> parse_channel_arguments("grpc.max_connection_age_ms=2000,grpc.primary_user_agent=x")
    [('grpc.max_connection_age_ms', 2000), ('grpc.primary_user_agent', 'x')]

    Raises:
        ConfigError: An argument without `=` (TF Serving reads past its end).
    """
    arguments = []
    for item in filter(None, text.split(",")):
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise ConfigError(
                message(
                    f"Invalid gRPC channel argument {echoed(item)!r}",
                    expected="comma-separated key=value pairs, e.g. grpc.max_connection_age_ms=2000",
                    received=f"grpc_channel_arguments={echoed(text)!r}",
                    fix="Write each argument as key=value.",
                )
            )
        number = int(value) if re.fullmatch(r"[+-]?\d+", value.strip()) else None
        is_int32 = number is not None and -(2**31) <= number < 2**31
        arguments.append((key, number if is_int32 else value))
    return arguments


async def health_service():
    """The standard `grpc.health.v1.Health` service as TF Serving's `--enable_grpc_healthcheck_service`
    serves it (server.cc: gRPC's default health service, which answers SERVING for the server as a whole,
    service "", plus SERVING for "ModelService" and "PredictionService"; any other name is NOT_FOUND).
    Call `enter_graceful_shutdown()` on it when the server stops: every service then reads NOT_SERVING."""
    from grpc_health.v1 import health, health_pb2

    servicer = health.aio.HealthServicer()
    for name in ("ModelService", "PredictionService"):
        await servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return servicer
