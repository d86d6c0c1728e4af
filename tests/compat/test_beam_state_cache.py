"""Beam's state cache weighed without the module walk (compat/beam/state_cache.py)."""

from __future__ import annotations

import numpy as np
import objsize
import pyarrow as pa
import pytest
from apache_beam.runners.worker import statecache

import compat
from compat.beam import state_cache as beam_state_cache


class _Row:
    def __init__(self, values):
        self.values = values
        self.helper = np.mean  # a function: Beam's filter leaves it out


def _beams_own(*objs):
    """What Beam 2.x's `statecache.get_deep_size` computes (objsize with its default module walk)."""
    return objsize.get_deep_size(
        *objs,
        get_size_func=statecache._size_func,
        get_referents_func=statecache._get_referents_func,
        filter_func=statecache._filter_func,
    )


VALUES = {
    "list of ints": list(range(1000)),
    "dict of strings": {f"key{i}": "v" * i for i in range(200)},
    "numpy array": np.arange(10_000, dtype=np.float32),
    "arrow record batch": pa.RecordBatch.from_arrays([pa.array(range(500)), pa.array(["a"] * 500)], ["x", "y"]),
    "objects with functions": [_Row(list(range(i))) for i in range(50)],
    "nested tuples": tuple((i, str(i), [i] * 3) for i in range(300)),
    "a module and a class": [np, _Row],
}


@pytest.mark.parametrize("value", list(VALUES.values()), ids=list(VALUES))
def test_weights_equal_beams_own(value):
    assert beam_state_cache.weigh(value) == _beams_own(value)


def test_install_puts_it_where_the_cache_looks():
    assert beam_state_cache.install() is True
    assert statecache.get_deep_size is beam_state_cache.weigh
    cache = statecache.StateCache(1 << 20)
    assert cache.get("key", lambda key: list(range(100))) == list(range(100))
    assert cache.size() == 1
    assert beam_state_cache.install() is True  # again: nothing changes


def test_its_shape_check_passes_on_the_pinned_beam():
    assert beam_state_cache.shape_problem() is None


def test_an_unexpected_beam_keeps_its_own(monkeypatch, caplog):
    monkeypatch.setattr(beam_state_cache, "_installed", False)
    monkeypatch.setattr(compat, "_warned", set())
    monkeypatch.delattr(statecache, "_filter_func")
    before = statecache.get_deep_size
    caplog.set_level("WARNING", logger="compat")
    assert beam_state_cache.install() is False
    assert statecache.get_deep_size is before
    assert [r.getMessage() for r in caplog.records] == [
        "compat: compat.beam.state_cache falls back to the library's own behaviour: "
        "apache_beam.runners.worker.statecache has no _filter_func"
    ]
