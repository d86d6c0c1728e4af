"""Errors with a TensorFlow Serving status code, and the one message formula.

Every error the server returns carries a canonical status code (the same codes
TensorFlow Serving uses) so REST and gRPC agree: REST maps the code to an HTTP
status with TensorFlow Serving's own table (`http_status`), gRPC returns the
code itself.

Example:
    >>> err = NotFound(message(
    ...     "Servable not found for request: Latest(iris)",
    ...     expected="one of the served models ['penguins']",
    ...     received="model name 'iris'",
    ...     fix="Check the model name in the URL.",
    ... ))
    >>> err.http_status
    404
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import grpc

__all__ = [
    "DeadlineExceeded",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "RequestTimeout",
    "RequestTooLarge",
    "ResourceExhausted",
    "ServingError",
    "Unavailable",
    "Unimplemented",
    "did_you_mean",
    "echoed",
    "message",
]

# The most characters of a client's value (a model name, a label) that an error message repeats: a
# 10 KB model name echoed twice overran gRPC's 16 KB metadata limit and turned NOT_FOUND into
# RESOURCE_EXHAUSTED at the client.
ECHO_LIMIT = 200

# TensorFlow Serving's ToHTTPStatusCode (model_servers/http_server.cc).
_HTTP_STATUS = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
    grpc.StatusCode.UNAUTHENTICATED: 401,
}


def message(problem: str, *, expected: str, received: str, fix: str) -> str:
    """Builds an error message: what is wrong, expected, received, how to fix.

    Args:
        problem: What is wrong. Starts with TensorFlow Serving's own wording
            when there is one, so clients matching on it keep working.
        expected: What was expected.
        received: What was received.
        fix: How to fix it, as an imperative sentence.

    Returns:
        One line: "<problem>. Expected <expected>. Received: <received>. <fix>"
    """
    problem = problem.rstrip(". ")
    return f"{problem}. Expected {expected}. Received: {received}. {fix}"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Returns ' Did you mean "x"?' for a close match, or an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f' Did you mean "{close[0]}"?' if close else ""


def echoed(value: str, limit: int = ECHO_LIMIT) -> str:
    """`value` as an error message repeats it: whole up to `limit` characters, else cut and marked.

    Example:
        >>> echoed("m" * 10_000, limit=3)
        'mmm...(10000 characters)'
    """
    if len(value) <= limit:
        return value
    return f"{value[:limit]}...({len(value)} characters)"


class ServingError(Exception):
    """An error carrying a canonical status code.

    Attributes:
        code: The gRPC status code, the same one TensorFlow Serving returns.
    """

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    @property
    def http_status(self) -> int:
        """The HTTP status TensorFlow Serving's REST API uses for `code`."""
        return _HTTP_STATUS.get(self.code, 500)

    @property
    def code_name(self) -> str:
        """The code's name as TensorFlow Serving writes it, e.g. 'NOT_FOUND'."""
        return self.code.name


class InvalidArgument(ServingError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServingError):
    code = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(ServingError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class DeadlineExceeded(ServingError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class PermissionDenied(ServingError):
    code = grpc.StatusCode.PERMISSION_DENIED


class RequestTimeout(ServingError):
    """A request body that did not arrive in time: HTTP 408, connection closed."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED

    @property
    def http_status(self) -> int:
        return 408


class ResourceExhausted(ServingError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class RequestTooLarge(ResourceExhausted):
    """A request body over the size limit: HTTP 413, gRPC RESOURCE_EXHAUSTED."""

    @property
    def http_status(self) -> int:
        return 413


class Unavailable(ServingError):
    code = grpc.StatusCode.UNAVAILABLE


class Unimplemented(ServingError):
    code = grpc.StatusCode.UNIMPLEMENTED


class Internal(ServingError):
    code = grpc.StatusCode.INTERNAL
