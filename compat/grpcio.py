"""grpcio internals the project uses (written for grpcio `PINNED`).

Entries:
- `CallAcceptor` (entry "compat.grpcio.CallAcceptor"): accepts calls of a
  registered method straight from the gRPC core of a grpc.aio server, and runs
  each through grpc.aio's own per-call code. `serving.server.grpc_service.accepts`
  keeps several such accepts posted per method, where grpc.aio's public server
  posts one at a time (the why is in that module, the measurements in NOTES.md). It
  reads grpcio's private Cython API: the server's `_server`
  (`cygrpc.AioServer`), `AioServer._request_registered_call`,
  `cygrpc._MethodResolver`, `cygrpc._handle_rpc` and
  `cygrpc._schedule_rpc_coro`. Shape check: those names exist, and the two
  functions take the parameters they take in grpcio `PINNED`. Fallback: no
  acceptor (`CallAcceptor.for_server` returns None); grpc.aio's own accept
  loop serves every method.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import compat

__all__ = ["PINNED", "CallAcceptor", "unsupported_reason"]

PINNED = "1.85.1"

ENTRY = "compat.grpcio.CallAcceptor"

# The private functions `CallAcceptor` calls, with the parameters they take in the pinned grpcio.
_CALLED = {
    "_handle_rpc": ("method_name", "method_resolver", "interceptors", "rpc_state", "loop", "concurrency_exceeded"),
    "_schedule_rpc_coro": ("rpc_coro", "rpc_state", "loop", "method_name"),
}


def unsupported_reason(server: Any = None) -> str | None:
    """Why `CallAcceptor` cannot run with the installed grpcio (None when it can).

    Args:
        server: a `grpc.aio.Server` to check as well, or None for the module-level names only.
    """
    from grpc._cython import cygrpc  # noqa: PLC0415 - private module; importing compat imports no library

    for name, parameters in _CALLED.items():
        code = getattr(getattr(cygrpc, name, None), "__code__", None)
        if code is None or code.co_varnames[: code.co_argcount] != parameters:
            return (
                f"grpc._cython.cygrpc.{name} is not the function of grpcio {PINNED} (parameters {parameters}); "
                "calls are accepted by grpc.aio's own loop, one at a time per method"
            )
    for owner, name in ((cygrpc, "_MethodResolver"), (cygrpc.AioServer, "_request_registered_call")):
        if not hasattr(owner, name):
            return f"{getattr(owner, '__name__', owner)}.{name} is missing; calls are accepted by grpc.aio's own loop"
    if server is not None and not isinstance(getattr(server, "_server", None), cygrpc.AioServer):
        return "the grpc.aio server does not hold a cygrpc.AioServer in `_server`; calls are accepted by grpc.aio's own loop"
    return None


class CallAcceptor:
    """Accepts calls of some registered methods of one grpc.aio server from its core, one `accept` per call.

    What grpc.aio's accept loop does for one call, taken apart so a caller can
    keep several accepts posted per method (see the module docstring). For
    servers without interceptors and without `maximum_concurrent_rpcs`: calls
    accepted here pass through neither.

    Example:
        acceptor = CallAcceptor.for_server(server, {"/pkg.Service/Method": handler})  # after server.start()
        while acceptor and acceptor.serving():
            acceptor.serve("/pkg.Service/Method", await acceptor.accept("/pkg.Service/Method"))
    """

    def __init__(self, server: Any, methods: Mapping[str, Any]) -> None:
        from grpc._cython import cygrpc  # noqa: PLC0415 - checked by `for_server`

        self._cygrpc = cygrpc
        self._core = server._server
        self._resolver = cygrpc._MethodResolver([], dict(methods))
        self._encoded = {method: method.encode() for method in methods}

    @classmethod
    def supported(cls, server: Any) -> bool:
        """Whether the installed grpcio has what `CallAcceptor` calls (else one log line: grpc.aio's own loop)."""
        return compat.check_shape(ENTRY, lambda: unsupported_reason(server))

    @classmethod
    def for_server(cls, server: Any, methods: Mapping[str, Any]) -> CallAcceptor | None:
        """An acceptor for `methods` ("/service/Method" -> handler) of `server`, or None where grpcio differs."""
        return cls(server, methods) if cls.supported(server) else None

    def serving(self) -> bool:
        """Whether the server's core still runs (accepts end when it stops)."""
        return self._core.is_running()

    async def accept(self, method: str) -> Any:
        """The next call of `method` the core hands over (raises once the server shuts down)."""
        return await self._core._request_registered_call(self._encoded[method])

    def serve(self, method: str, call: Any, loop: asyncio.AbstractEventLoop) -> asyncio.Task:
        """Runs an accepted call through grpc.aio's per-call code (as its accept loop does), in a task on `loop`."""
        coro = self._cygrpc._handle_rpc(method, self._resolver, (), call, loop, False)
        return loop.create_task(self._cygrpc._schedule_rpc_coro(coro, call, loop, method))
