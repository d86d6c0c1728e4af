"""`gc_paused`: the collector is off inside, as it was after, also when it was already off."""

from __future__ import annotations

import gc

from serving.server.guards.memory import gc_paused


def test_gc_paused_pauses_and_restores():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_gc_paused_restores_after_an_error():
    try:
        with gc_paused():
            raise ValueError("inside")
    except ValueError:
        pass
    assert gc.isenabled()
