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

Why: grpc.aio's loop accepts one call per event-loop iteration, which caps the
request rate under concurrent load; requests kept posted raise it (figures in
NOTES.md, "Serving measurements").

Accepting a call from the core and handing it to grpc.aio's per-call code
needs grpcio's private Cython API: `compat.grpcio.CallAcceptor` holds it,
with its check of the pinned grpcio's shape. Where that check fails, the
server logs one line and serves through grpc.aio's loop alone.

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

from compat.grpcio import CallAcceptor

__all__ = ["ACCEPTS_IN_FLIGHT", "ConcurrentAccepts"]

log = logging.getLogger(__name__)

# Requests posted per method besides grpc.aio's own (see the measurements above).
ACCEPTS_IN_FLIGHT = 16


class ConcurrentAccepts:
    """Accept loops for some methods of one grpc.aio server (see the module docstring).

    For servers built without interceptors and without
    `maximum_concurrent_rpcs` (as `grpc_service.api.start_grpc_server` builds its
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
        if count < 1 or not CallAcceptor.supported(server):  # logs one line where grpcio differs
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
        loop = asyncio.get_running_loop()
        acceptor = CallAcceptor(self._server, self._methods)
        for method in self._methods:
            for _ in range(self._count):
                self._loops.append(loop.create_task(self._accept(acceptor, loop, method)))

    async def _accept(self, acceptor: CallAcceptor, loop: asyncio.AbstractEventLoop, method: str) -> None:
        while acceptor.serving():
            try:
                call = await acceptor.accept(method)
            except Exception:  # noqa: BLE001 - the core refuses requests once the server shuts down
                if acceptor.serving():
                    log.exception("gRPC accept loop for %s stopped; grpc.aio's own loop still serves it", method)
                return
            self.accepted += 1
            task = acceptor.serve(method, call, loop)
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
