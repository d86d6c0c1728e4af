"""gRPC method handlers that answer an unparsable request with INTERNAL, as TF Serving's C++ gRPC.

The generated `add_*Servicer_to_server` functions parse requests with the
message's `FromString`; when it raises, grpcio answers UNKNOWN
"Unexpected <class 'google.protobuf.message.DecodeError'>: ...". TF Serving's
C++ gRPC answers INTERNAL with the message's `InitializationErrorString()`,
empty for these proto3 messages (`GenericDeserialize`, grpcpp's
`impl/codegen/proto_utils.h`). Here a request that does not parse becomes an
`Undecodable` value, and the method answers INTERNAL with a message in the one
formula, naming the message type and the fix.

Example:
    >>> from tensorflow_serving.apis import predict_pb2
    >>> deserialize = lenient(predict_pb2.PredictRequest)
    >>> type(deserialize(b"\\xff\\xff")).__name__
    'Undecodable'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import grpc
from google.protobuf.message import DecodeError, Message

from serving.errors import message

__all__ = ["Undecodable", "add_servicer", "lenient"]


@dataclasses.dataclass(frozen=True)
class Undecodable:
    """A request body that is not a serialized `type_name`."""

    type_name: str
    size: int
    reason: str

    def error_text(self) -> str:
        return message(
            f"Could not parse the request as {self.type_name}: {self.reason}",
            expected=f"a serialized {self.type_name}",
            received=f"{self.size} bytes that are not one",
            fix="Build the request with the tensorflow-serving-api protos (or protos compiled from "
            "tensorflow_serving/apis) and send it to the method that takes that type.",
        )


def lenient(
    message_class: type[Message], parse_as: type[Message] | None = None
) -> Callable[[bytes], Message | Undecodable]:
    """`message_class.FromString`, returning an `Undecodable` instead of raising.

    `parse_as`: a message class with `message_class`'s wire format to parse
    into instead (`predict_wire.PredictRequestEntries`); errors still name
    `message_class`.
    """
    parse = (parse_as or message_class).FromString
    type_name = message_class.DESCRIPTOR.full_name

    def deserialize(data: bytes) -> Message | Undecodable:
        try:
            return parse(data)
        except DecodeError as err:
            return Undecodable(type_name, len(data), str(err) or type(err).__name__)

    return deserialize


def _serializer(message_class: type[Message]) -> Callable[[Message | bytes], bytes]:
    """`message_class.SerializeToString`; bytes a method wrote itself (`predict_wire`) pass as they are."""
    serialize = message_class.SerializeToString

    def serializer(response: Message | bytes) -> bytes:
        return response if response.__class__ is bytes else serialize(response)

    return serializer


def add_servicer(
    server: grpc.aio.Server,
    service: str,
    servicer: object,
    methods: Mapping[str, tuple[type[Message], type[Message]]],
    parse_as: Mapping[str, type[Message]] | None = None,
) -> dict[str, grpc.RpcMethodHandler]:
    """Registers `servicer`'s unary methods as the generated code does, with lenient parsing.

    Args:
        server: The gRPC server.
        service: The full service name (`tensorflow.serving.PredictionService`).
        servicer: Has a coroutine method per name in `methods`, which answers
            an `Undecodable` request with INTERNAL and its
            `error_text()` (`grpc_service.api`'s `_grpc_method` does).
        methods: Method name to (request class, response class).
        parse_as: Method name to the class its requests are parsed into,
            where it is not the request class (see `lenient`).

    Returns:
        The method handlers by method name.
    """
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            getattr(servicer, name),
            request_deserializer=lenient(request, (parse_as or {}).get(name)),
            response_serializer=_serializer(response),
        )
        for name, (request, response) in methods.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    return handlers
