"""compat.keras: the pinned tf-keras has what each entry reads; where it differs, the entry falls back."""

from __future__ import annotations

import logging

import pytest
import tensorflow as tf

import compat
from compat import keras as compat_keras


@pytest.fixture
def fresh_warnings(monkeypatch, caplog):
    """Each fallback's line is logged once per process: start from none logged, and capture them."""
    monkeypatch.setattr(compat, "_warned", set())
    caplog.set_level(logging.WARNING, logger="compat")
    return caplog


def _attention_model() -> tuple[tf.keras.Model, tf.keras.layers.MultiHeadAttention]:
    x = tf.keras.Input((5, 8))
    attention = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    y = tf.keras.layers.Dense(1)(attention(x, x))
    return tf.keras.Model(x, y), attention


def test_tf_keras_is_the_pinned_version():
    installed = compat.installed_version("tf-keras")
    assert installed == compat_keras.PINNED, (
        f"re-check every entry of compat/keras.py against tf-keras {installed}, then update PINNED"
    )


def test_each_entry_shape_holds_on_the_pinned_tf_keras():
    model, attention = _attention_model()
    assert compat_keras._compiled_shape(model) is None
    assert compat_keras._nodes_shape(model) is None
    assert compat_keras._flatten_shape(model) is None
    assert compat_keras._attention_shape(attention) is None


def test_is_compiled_reads_the_flag_or_falls_back_to_the_optimizer(fresh_warnings, monkeypatch):
    model, _ = _attention_model()
    assert not compat_keras.is_compiled(model)
    model.compile(optimizer="adam", loss="mse")
    assert compat_keras.is_compiled(model)
    monkeypatch.setattr(compat_keras, "_compiled_shape", lambda model: "moved")
    assert compat_keras.is_compiled(model)
    assert not compat_keras.is_compiled(_attention_model()[0])
    assert len(fresh_warnings.records) == 1


def test_nodes_by_depth_is_the_layer_graph_or_none(fresh_warnings, monkeypatch):
    model, attention = _attention_model()
    layers = {node.layer for nodes in compat_keras.nodes_by_depth(model).values() for node in nodes}
    assert attention in layers and len(layers) == 3
    assert compat_keras.nodes_by_depth(attention) is None  # a layer, not a model: no graph, no log line
    monkeypatch.setattr(compat_keras, "_nodes_shape", lambda model: "moved")
    assert compat_keras.nodes_by_depth(model) is None
    assert len(fresh_warnings.records) == 1


def test_sublayers_finds_layers_inside_a_block_either_way(fresh_warnings, monkeypatch):
    model, attention = _attention_model()
    found = compat_keras.sublayers(model)
    assert found[0] is model and attention in found
    monkeypatch.setattr(compat_keras, "_flatten_shape", lambda layer: "moved")
    fallback = compat_keras.sublayers(model)
    assert fallback[0] is model and attention in fallback
    assert len(fresh_warnings.records) == 1


def test_attention_sizes_read_the_layer_or_its_config(fresh_warnings, monkeypatch):
    _, attention = _attention_model()
    sizes = compat_keras.attention_sizes(attention)
    assert (tuple(sizes.query_shape), tuple(sizes.value_shape)) == ((None, 5, 8), (None, 5, 8))
    assert (sizes.num_heads, sizes.key_dim, sizes.value_dim) == (2, 4, 4)
    monkeypatch.setattr(compat_keras, "_attention_shape", lambda layer: "moved")
    assert compat_keras.attention_sizes(attention) == sizes
    assert len(fresh_warnings.records) == 1
