"""Keras 2 (tf-keras) internals the project uses (written for tf-keras `PINNED`).

The project trains Keras 2 models (`tf.keras` with TF_USE_LEGACY_KERAS=1, see
components/common/keras_env.py). Entries (each function's docstring says
what, why and its fallback):
- `is_compiled`: `Model._is_compiled` (components/trainer/run_fn.py).
- `nodes_by_depth`: a functional model's `_nodes_by_depth`, its layer graph
  (components/trainer/devices/accelerator_memory.py).
- `sublayers`: `Layer._flatten_layers` (components/trainer/devices/accelerator_memory.py).
- `attention_sizes`: a built MultiHeadAttention's shapes and sizes
  (components/trainer/devices/accelerator_memory.py).

TensorFlow is imported when an entry is first called, not with this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Optional

import compat

__all__ = ["PINNED", "AttentionSizes", "attention_sizes", "is_compiled", "nodes_by_depth", "sublayers"]

PINNED = "2.16.0"


def _compiled_shape(model: Any) -> str | None:
    if not isinstance(getattr(model, "_is_compiled", None), bool):
        return f"{type(model).__name__} has no boolean `_is_compiled`"
    return None


def is_compiled(model: Any) -> bool:
    """Whether `model.compile` was called.

    What: `model._is_compiled`. Why: tf-keras has no public flag for it.
    Fallback: `model.optimizer is not None` (compile always sets an optimizer;
    a model given an `optimizer` attribute by hand would count as compiled).
    """
    if compat.check_shape("compat.keras.is_compiled", lambda: _compiled_shape(model)):
        return model._is_compiled
    return getattr(model, "optimizer", None) is not None


def _nodes_shape(model: Any) -> str | None:
    graph = model._nodes_by_depth
    if not isinstance(graph, Mapping) or not all(isinstance(nodes, list) for nodes in graph.values()):
        return f"{type(model).__name__}._nodes_by_depth is not a mapping of depth -> list of nodes"
    return None


def nodes_by_depth(model: Any) -> Optional[Mapping[int, list]]:
    """A functional (or Sequential) model's layer graph, {depth: [Node]}; None for a model without one.

    What: `model._nodes_by_depth` (each Node has `layer`, `is_input`,
    `outputs`). Why: tf-keras's public API gives a model's layers, not the
    graph of calls between them (a layer called twice has two nodes, each
    with its own output). Fallback: None (a subclassed model, or a tf-keras
    of another shape: the caller treats the graph as unknown).
    """
    import tensorflow as tf  # noqa: PLC0415 - lazy: importing compat imports no library

    if not isinstance(model, tf.keras.Model) or not hasattr(model, "_nodes_by_depth"):
        return None
    if compat.check_shape("compat.keras.nodes_by_depth", lambda: _nodes_shape(model)):
        return model._nodes_by_depth
    return None


def _flatten_shape(layer: Any) -> str | None:
    parameters = tuple(inspect.signature(type(layer)._flatten_layers).parameters)
    if parameters != ("self", "recursive", "include_self"):
        return f"Layer._flatten_layers takes {parameters}, not (self, recursive, include_self)"
    return None


def sublayers(layer: Any) -> Sequence[Any]:
    """`layer` and every layer inside it, at any depth (layers of custom blocks too).

    What: `layer._flatten_layers(include_self=True)`, the layers Keras itself
    tracks. Why: the public `layer.submodules` is tf.Module's walk over every
    attribute (not only layers, and slower). Fallback: `layer` and the
    layers among `layer.submodules`.
    """
    if compat.check_shape("compat.keras.sublayers", lambda: _flatten_shape(layer)):
        return list(layer._flatten_layers(include_self=True))
    import tensorflow as tf  # noqa: PLC0415

    return [layer, *(module for module in layer.submodules if isinstance(module, tf.keras.layers.Layer))]


class AttentionSizes(NamedTuple):
    """A built MultiHeadAttention's input shapes (None before it is built) and sizes."""

    query_shape: Any
    value_shape: Any
    num_heads: int
    key_dim: int
    value_dim: int


_ATTENTION_ATTRIBUTES = ("_query_shape", "_value_shape", "_num_heads", "_key_dim", "_value_dim")


def _attention_shape(layer: Any) -> str | None:
    missing = [name for name in _ATTENTION_ATTRIBUTES if not hasattr(layer, name)]
    return f"MultiHeadAttention has no {', '.join(missing)}" if missing else None


def attention_sizes(layer: Any) -> AttentionSizes:
    """The query and value shapes, heads, key and value sizes of a MultiHeadAttention layer.

    What: its `_query_shape`, `_value_shape`, `_num_heads`, `_key_dim` and
    `_value_dim` (or `_key_dim` when unset). Why: the public `get_config()`
    holds them too, but a user's subclass with arguments of its own may not
    define `get_config` (tf-keras then raises). Fallback: `get_config()`.
    """
    if compat.check_shape("compat.keras.attention_sizes", lambda: _attention_shape(layer)):
        query, value = layer._query_shape, layer._value_shape
        heads, key_dim, value_dim = layer._num_heads, layer._key_dim, layer._value_dim
    else:
        config = layer.get_config()
        query, value = config.get("query_shape"), config.get("value_shape")
        heads, key_dim, value_dim = config["num_heads"], config["key_dim"], config.get("value_dim")
    return AttentionSizes(query, value, heads, key_dim, value_dim or key_dim)
