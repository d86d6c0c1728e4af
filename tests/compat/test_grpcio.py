"""compat.grpcio: the pinned grpcio has what each entry reads; where it differs, the entry falls back."""

from __future__ import annotations

import asyncio
import logging

import grpc

import compat
from compat import grpcio as compat_grpcio


def test_grpcio_is_the_pinned_version():
    installed = compat.installed_version("grpcio")
    assert installed == compat_grpcio.PINNED, (
        f"re-check every entry of compat/grpcio.py against grpcio {installed}, then update PINNED"
    )


def test_call_acceptor_shape_holds_on_the_pinned_grpcio():
    async def check() -> str | None:
        server = grpc.aio.server()
        try:
            return compat_grpcio.unsupported_reason(server)
        finally:
            await server.stop(None)

    assert compat_grpcio.unsupported_reason() is None
    assert asyncio.run(check()) is None


def test_call_acceptor_falls_back_with_one_log_line(monkeypatch, caplog):
    monkeypatch.setitem(compat_grpcio._CALLED, "_handle_rpc", ("generic_handlers", "rpc_state", "loop"))
    monkeypatch.setattr(compat, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="compat"):
        assert compat_grpcio.CallAcceptor.for_server(object(), {}) is None
        assert compat_grpcio.CallAcceptor.for_server(object(), {}) is None
    assert len(caplog.records) == 1
    assert "compat.grpcio.CallAcceptor falls back" in caplog.records[0].getMessage()
    assert "_handle_rpc" in caplog.records[0].getMessage()
