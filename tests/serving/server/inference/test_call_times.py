"""Each signature's last call time (`serving/server/inference/call_times.py`)."""

from __future__ import annotations

import gc

import pytest

from serving.server.inference.call_times import CallTimes


class _Signature:
    """Stands for a Signature: only its identity and weak-referenceability matter here."""


def test_unmeasured_is_none_then_the_last_call_counts():
    times, signature = CallTimes(), _Signature()
    assert times.estimate(signature) is None
    times.record(signature, 0.004, size=8)
    times.record(signature, 0.002, size=8)
    assert times.estimate(signature) == 0.002


def test_a_larger_call_scales_the_estimate_up_never_down():
    times, signature = CallTimes(), _Signature()
    times.record(signature, 0.002, size=10)
    assert times.estimate(signature, size=40) == pytest.approx(0.008)
    assert times.estimate(signature, size=1) == 0.002
    assert times.estimate(signature) == 0.002


def test_timed_records_also_when_the_call_raises():
    times, signature = CallTimes(), _Signature()

    def fail():
        raise ValueError("no")

    with pytest.raises(ValueError):
        times.timed(signature, 3, fail)
    assert times.estimate(signature) is not None
    assert times.timed(signature, 3, lambda a, b: a + b, 1, 2) == 3


def test_a_freed_signature_is_forgotten_and_its_id_gets_no_old_time():
    times, signature = CallTimes(), _Signature()
    times.record(signature, 0.001, size=1)
    del signature
    gc.collect()
    assert times._last == {}  # noqa: SLF001 - what the weak reference cleans up
    assert times.estimate(_Signature()) is None
