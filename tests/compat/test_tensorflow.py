"""compat.tensorflow: the pinned TensorFlow has what each entry reads; where it differs, the entry falls back."""

from __future__ import annotations

import contextlib
import logging

import numpy as np
import pytest
import tensorflow as tf

import compat
from compat import tensorflow as compat_tf


@pytest.fixture
def fresh_warnings(monkeypatch, caplog):
    """Each fallback's line is logged once per process: start from none logged, and capture them."""
    monkeypatch.setattr(compat, "_warned", set())
    caplog.set_level(logging.WARNING, logger="compat")
    return caplog


def test_tensorflow_is_the_pinned_version():
    installed = compat.installed_version("tensorflow")
    assert installed == compat_tf.PINNED, (
        f"re-check every entry of compat/tensorflow.py against tensorflow {installed}, then update PINNED"
    )


@pytest.mark.parametrize(
    "check",
    ["_session_callable_shape", "_collective_key_shape", "_silence_shape", "_op_registry_shape", "_autograph_shape"],
)
def test_each_entry_shape_holds_on_the_pinned_tensorflow(check):
    assert getattr(compat_tf, check)() is None


def _doubling_session() -> tf.compat.v1.Session:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[None], name="x")
        tf.identity(x * 2.0, name="y")
    return tf.compat.v1.Session(graph=graph)


@pytest.mark.parametrize("shape_holds", [True, False])
def test_make_callable_from_options_runs_the_session_or_falls_back_to_make_callable(
    shape_holds, fresh_warnings, monkeypatch
):
    if not shape_holds:
        monkeypatch.setattr(compat_tf, "_session_callable_shape", lambda: "no `_make_callable_from_options`")
    with _doubling_session() as session:
        run = compat_tf.make_callable_from_options(session, feed=["x:0"], fetch=["y:0"])
        (y,) = run(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(y, [2.0, 4.0])
    lines = [r.getMessage() for r in fresh_warnings.records]
    assert lines == (
        []
        if shape_holds
        else [
            "compat: compat.tensorflow.make_callable_from_options falls back to the library's own behaviour: "
            "no `_make_callable_from_options`"
        ]
    )


def test_separate_collective_keys_moves_the_base_or_leaves_it(fresh_warnings, monkeypatch):
    monkeypatch.setattr(tf.distribute.MirroredStrategy, "_collective_key_base", 0)
    compat_tf.separate_collective_keys()
    assert tf.distribute.MirroredStrategy._collective_key_base == compat_tf.COLLECTIVE_KEY_STEP
    monkeypatch.setattr(compat_tf, "_collective_key_shape", lambda: "moved")
    compat_tf.separate_collective_keys()
    assert tf.distribute.MirroredStrategy._collective_key_base == compat_tf.COLLECTIVE_KEY_STEP
    assert len(fresh_warnings.records) == 1


def test_unregistered_ops_names_the_unknown_ones_or_none(fresh_warnings, monkeypatch):
    assert compat_tf.unregistered_ops({"MatMul", "NoSuchOpAnywhere"}) == {"NoSuchOpAnywhere"}
    monkeypatch.setattr(compat_tf, "_op_registry_shape", lambda: "moved")
    assert compat_tf.unregistered_ops({"MatMul", "NoSuchOpAnywhere"}) == set()
    assert len(fresh_warnings.records) == 1


def test_silence_deprecation_falls_back_to_a_context_that_does_nothing(fresh_warnings, monkeypatch):
    with compat_tf.silence_deprecation():
        pass
    monkeypatch.setattr(compat_tf, "_silence_shape", lambda: "moved")
    assert isinstance(compat_tf.silence_deprecation(), contextlib.nullcontext)
    assert len(fresh_warnings.records) == 1


def test_skip_autograph_for_leaves_the_rules_when_the_shape_differs(fresh_warnings, monkeypatch):
    from tensorflow.python.autograph.core import config

    before = config.CONVERSION_RULES
    monkeypatch.setattr(compat_tf, "_autograph_shape", lambda: "moved")
    compat_tf.skip_autograph_for("compat_test_module")
    assert config.CONVERSION_RULES == before
    assert len(fresh_warnings.records) == 1
