"""Registers the TensorFlow Text ops a SavedModel needs before it is loaded.

A model whose graph tokenizes text (a `transform: text` feature with
`tokenizer: wordpiece` runs `WordpieceTokenizeWithOffsets` inside the model)
names ops that TensorFlow itself does not register: tensorflow-text's. TF
Serving's own binary links them (TF Text 2.12.1 in its builds), so such a
model loads there. A Python process registers them only by importing
`tensorflow_text`; without that, `tf.saved_model.load` (the embedded server,
tf.Transform's `TFTransformOutput`, TFMA) fails with "Op type not registered
'WordpieceTokenizeWithOffsets' in binary".

Importing tensorflow_text in every process would cost each one ~0.2 s and a
dependency on its shared library, for the many models that do not need it. So
the loaders call `register_ops_for` with the graph they are about to load: it
imports tensorflow_text only when the graph names an op TensorFlow does not
know. Ops it does not provide either are left for TensorFlow's own error.

Example:
    >>> from serving.savedmodel import read_serving_graph
    >>> register_ops_for(read_serving_graph("models/topics/1"))  # doctest: +SKIP
"""

from __future__ import annotations

import os

import tensorflow as tf
from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2

from compat import tensorflow as compat_tf

__all__ = ["unregistered_ops", "register_ops_for", "register_ops_for_saved_model"]

_INSTALL = "pip install tensorflow-text==2.16.1"


def unregistered_ops(graph: meta_graph_pb2.MetaGraphDef) -> set[str]:
    """The op types `graph` (and its function library) uses that TensorFlow has not registered."""
    library = graph.graph_def.library
    functions = {function.signature.name for function in library.function}
    ops = {node.op for node in graph.graph_def.node}
    for function in library.function:
        ops.update(node.op for node in function.node_def)
    return compat_tf.unregistered_ops(ops - functions)


def register_ops_for(graph: meta_graph_pb2.MetaGraphDef) -> set[str]:
    """Imports tensorflow_text when `graph` names an op TensorFlow has not registered.

    Args:
        graph: the MetaGraphDef about to be loaded.

    Returns:
        The op types still unregistered afterwards (empty when all are known).

    Raises:
        ImportError: the graph needs ops TensorFlow lacks and tensorflow-text is not installed.
    """
    missing = unregistered_ops(graph)
    if not missing:
        return set()
    try:
        import tensorflow_text  # noqa: F401 - registers TF Text's ops
    except ImportError as error:
        raise ImportError(
            f"The model uses ops TensorFlow does not register: {sorted(missing)}. Expected them from "
            f"tensorflow-text (a `tokenizer: wordpiece` model needs it). Received: {error}. Install it with "
            f"`{_INSTALL}`."
        ) from error
    return unregistered_ops(graph)


def register_ops_for_saved_model(export_dir: str | os.PathLike) -> set[str]:
    """`register_ops_for` every graph of the SavedModel in `export_dir` (nothing when it has no saved_model.pb).

    Args:
        export_dir: a SavedModel directory, local or a `gs://`-style URI.

    Returns:
        The op types still unregistered afterwards.
    """
    path = os.path.join(os.fspath(export_dir), "saved_model.pb")
    if not tf.io.gfile.exists(path):
        return set()
    with tf.io.gfile.GFile(path, "rb") as file:
        saved_model = saved_model_pb2.SavedModel.FromString(file.read())
    missing: set[str] = set()
    for graph in saved_model.meta_graphs:
        missing |= register_ops_for(graph)
    return missing
