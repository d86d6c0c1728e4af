"""Several calls of a method waiting to be accepted on grpc.aio's server, not one.

grpc.aio's server (grpcio 1.85) asks the gRPC core for a method's next call
one at a time: its accept loop posts one request per method, waits for it in
`asyncio.wait` (a task per request), starts the call, and only then posts the
next. Each of those round trips crosses grpc.aio's poller thread (an eventfd
kick, a byte on a socket) and the event loop. Calls that arrive together
queue in the core and are accepted one round trip apart, while the loop
thread, the bottleneck, waits. C++ gRPC servers, TensorFlow Serving's among
them, keep many requests posted instead.

`ConcurrentAccepts` registers a method with the core (grpc.aio's
`add_registered_method_handlers`) and, once the server runs, keeps `count`
requests for its calls posted, each in a loop of its own on the server's
event loop. A call a loop accepts goes through grpc.aio's own per-call code
(`_handle_rpc` and `_schedule_rpc_coro`, what grpc.aio's accept loop runs
for it), so deserialization, status codes, cancellation, deadlines and
shutdown are grpc.aio's. grpc.aio's own loop keeps serving every method too.

Measured (benchmarks/serving_load.py's model, 32 concurrent gRPC Predict
calls from h2load, 2 CPUs, 2026-11-27): batching on 5,124 requests/s with
grpc.aio's loop alone; 6,276 with one more request posted, 7,031 with 3,
8,795 with 8, 8,826 with 16; batching off 1,750 -> 2,426 with 16.

Those two functions and `AioServer._request_registered_call` are grpcio's
private Cython API. The loops start only where they have the signatures of
the grpcio pinned in requirements.lock (`unsupported_reason()`); elsewhere
the server logs one line and serves through grpc.aio's loop alone.

Example:
    accepts = ConcurrentAccepts.register(server, "pkg.Service", {"Method": handler})
    await server.start()
    accepts.start()
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

import grpc

__all__ = ["ACCEPTS_IN_FLIGHT", "ConcurrentAccepts", "unsupported_reason"]

log = logging.getLogger(__name__)

# Requests posted per method besides grpc.aio's own (see the measurements above).
ACCEPTS_IN_FLIGHT = 16

# The private functions the loops call, with the parameters they take in the pinned grpcio.
_CALLED = {
    "_handle_rpc": ("method_name", "method_resolver", "interceptors", "rpc_state", "loop", "concurrency_exceeded"),
    "_schedule_rpc_coro": ("rpc_coro", "rpc_state", "loop", "method_name"),
}


def unsupported_reason(server: grpc.aio.Server | None = None) -> str | None:
    """Why the accept loops cannot run with this grpcio (None when they can)."""
    from grpc._cython import cygrpc  # noqa: PLC0415 - private module, read only here

    for name, parameters in _CALLED.items():
        code = getattr(getattr(cygrpc, name, None), "__code__", None)
        if code is None or code.co_varnames[: code.co_argcount] != parameters:
            return f"grpc._cython.cygrpc.{name} is not the function of grpcio 1.85 (parameters {parameters})"
    for owner, name in ((cygrpc, "_MethodResolver"), (cygrpc.AioServer, "_request_registered_call")):
        if not hasattr(owner, name):
            return f"{getattr(owner, '__name__', owner)}.{name} is missing"
    if server is not None and not isinstance(getattr(server, "_server", None), cygrpc.AioServer):
        return "the grpc.aio server does not hold a cygrpc.AioServer in `_server`"
    return None


class ConcurrentAccepts:
    """Accept loops for some methods of one grpc.aio server (see the module docstring).

    For servers built without interceptors and without
    `maximum_concurrent_rpcs` (as `grpc_api.start_grpc_server` builds its
    server): the calls these loops accept do not pass through either.
    """

    def __init__(self, server: grpc.aio.Server, methods: Mapping[str, grpc.RpcMethodHandler], count: int) -> None:
        self._server = server
        self._methods = dict(methods)  # "/service/Method" -> handler
        self._count = count
        self._loops: list[asyncio.Task] = []
        self._calls: set[asyncio.Task] = set()  # the loop holds tasks weakly
        self.accepted = 0  # calls the loops accepted (grpc.aio's loop takes the others)

    @classmethod
    def register(
        cls,
        server: grpc.aio.Server,
        service: str,
        handlers: Mapping[str, grpc.RpcMethodHandler],
        count: int = ACCEPTS_IN_FLIGHT,
    ) -> ConcurrentAccepts:
        """Registers `service`'s methods in `handlers` with the core; call before `server.start()`.

        Where this grpcio is not the one the loops were written for, registers
        nothing and returns accepts whose `start()` does nothing.
        """
        reason = unsupported_reason(server)
        if reason is not None or count < 1:
            if reason is not None:
                log.warning("gRPC: one accept at a time per method (grpc.aio's own loop): %s", reason)
            return cls(server, {}, 0)
        server.add_registered_method_handlers(service, dict(handlers))
        return cls(server, {f"/{service}/{name}": handler for name, handler in handlers.items()}, count)

    @property
    def running(self) -> int:
        """Accept loops running now."""
        return sum(not loop.done() for loop in self._loops)

    def start(self) -> None:
        """Starts the loops; call on the server's event loop, after `server.start()`."""
        if not self._methods:
            return
        from grpc._cython import cygrpc  # noqa: PLC0415 - private module, checked by unsupported_reason

        loop = asyncio.get_running_loop()
        resolver = cygrpc._MethodResolver([], self._methods)
        for method in self._methods:
            for _ in range(self._count):
                self._loops.append(loop.create_task(self._accept(cygrpc, loop, resolver, method)))

    async def _accept(self, cygrpc, loop: asyncio.AbstractEventLoop, resolver, method: str) -> None:
        core = self._server._server
        method_bytes = method.encode()
        while core.is_running():
            try:
                rpc_state = await core._request_registered_call(method_bytes)
            except Exception:  # noqa: BLE001 - the core refuses requests once the server shuts down
                if core.is_running():
                    log.exception("gRPC accept loop for %s stopped; grpc.aio's own loop still serves it", method)
                return
            self.accepted += 1
            call = cygrpc._handle_rpc(method, resolver, (), rpc_state, loop, False)
            task = loop.create_task(cygrpc._schedule_rpc_coro(call, rpc_state, loop, method))
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
