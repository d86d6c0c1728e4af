"""Read and patch the SignatureDefs stored in a SavedModel's saved_model.pb.

TensorFlow Serving decides which API a signature serves from its
`method_name` (predict, classify or regress), which lives in the MetaGraphDef,
not in the functions `tf.saved_model.load` returns. TF2's `tf.saved_model.save`
always writes `tensorflow/serving/predict`, so exporters that want a Classify or
Regress endpoint patch the method name afterwards (`set_method_names`).

Example:
    >>> set_method_names("/models/penguins/3", {"classification": CLASSIFY_METHOD})
    >>> read_signature_defs("/models/penguins/3")["classification"].method_name
    'tensorflow/serving/classify'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2

from serving.atomic import atomic_write_bytes
from serving.errors import message

__all__ = [
    "CLASSIFY_METHOD",
    "DEFAULT_SIGNATURE",
    "PREDICT_METHOD",
    "REGRESS_METHOD",
    "SERVE_TAG",
    "read_serving_graph",
    "read_signature_defs",
    "servable_signature_defs",
    "set_method_names",
    "written_by_tf1",
]

PREDICT_METHOD = "tensorflow/serving/predict"
CLASSIFY_METHOD = "tensorflow/serving/classify"
REGRESS_METHOD = "tensorflow/serving/regress"
DEFAULT_SIGNATURE = "serving_default"
SERVE_TAG = "serve"
_INTERNAL_PREFIX = "__"  # e.g. __saved_model_init_op, not a servable signature


def _read(export_dir: Path) -> saved_model_pb2.SavedModel:
    path = export_dir / "saved_model.pb"
    if not path.is_file():
        names = sorted(p.name for p in export_dir.iterdir()) if export_dir.is_dir() else []
        legacy = " (export.meta is a SessionBundle export, a format TensorFlow Serving 2.x does not load)"
        raise FileNotFoundError(
            message(
                # TensorFlow's own wording first, as TensorFlow Serving reports it.
                f"Could not find SavedModel .pb or .pbtxt at supplied export directory path: {export_dir}",
                expected="a SavedModel directory (saved_model.pb, variables/)",
                received=f"No saved_model.pb in {export_dir}: "
                + ((f"{names}" + (legacy if "export.meta" in names else "")) if names else "no such directory"),
                fix="Re-export the model with tf.saved_model.save (or a TF1 SavedModelBuilder) into this directory.",
            )
        )
    return saved_model_pb2.SavedModel.FromString(path.read_bytes())


def _serving_graph(saved_model: saved_model_pb2.SavedModel, export_dir: Path) -> meta_graph_pb2.MetaGraphDef:
    for graph in saved_model.meta_graphs:
        if SERVE_TAG in graph.meta_info_def.tags:
            return graph
    tags = [list(g.meta_info_def.tags) for g in saved_model.meta_graphs]
    raise ValueError(
        message(
            f"No MetaGraphDef tagged '{SERVE_TAG}' in {export_dir}",
            expected=f"a graph with tag '{SERVE_TAG}'",
            received=f"tags {tags}",
            fix="Export the model with tf.saved_model.save (it tags the graph 'serve').",
        )
    )


def read_serving_graph(export_dir: str | os.PathLike) -> meta_graph_pb2.MetaGraphDef:
    """Returns the MetaGraphDef tagged 'serve' of a SavedModel.

    Args:
        export_dir: The SavedModel (version) directory.

    Raises:
        FileNotFoundError: There is no saved_model.pb in `export_dir`.
        ValueError: No graph is tagged 'serve'.
    """
    export_dir = Path(export_dir)
    return _serving_graph(_read(export_dir), export_dir)


def servable_signature_defs(graph: meta_graph_pb2.MetaGraphDef) -> dict[str, meta_graph_pb2.SignatureDef]:
    """The SignatureDefs of `graph` a server serves, without internal entries."""
    return {name: signature for name, signature in graph.signature_def.items() if not name.startswith(_INTERNAL_PREFIX)}


def written_by_tf1(graph: meta_graph_pb2.MetaGraphDef) -> bool:
    """True for a TF1 SavedModel (no object graph: `tf.compat.v1.saved_model` builders)."""
    return not graph.object_graph_def.nodes


def read_signature_defs(export_dir: str | os.PathLike) -> dict[str, meta_graph_pb2.SignatureDef]:
    """Returns the servable SignatureDefs of the 'serve' graph, by name.

    Internal entries such as `__saved_model_init_op` are left out, as
    TensorFlow Serving does.
    """
    return servable_signature_defs(read_serving_graph(export_dir))


def set_method_names(export_dir: str | os.PathLike, method_names: Mapping[str, str]) -> None:
    """Sets the `method_name` of signatures in saved_model.pb, atomically.

    Args:
        export_dir: The SavedModel directory.
        method_names: Signature name to method name, e.g.
            {"classification": CLASSIFY_METHOD}.

    Raises:
        KeyError: A signature name is not in the SavedModel.
        ValueError: A method name is not predict, classify or regress.
    """
    export_dir = Path(export_dir)
    saved_model = _read(export_dir)
    graph = _serving_graph(saved_model, export_dir)
    known = (PREDICT_METHOD, CLASSIFY_METHOD, REGRESS_METHOD)
    for name, method in method_names.items():
        if name not in graph.signature_def:
            raise KeyError(
                message(
                    f"Signature {name!r} is not in {export_dir}",
                    expected=f"one of {sorted(read_signature_defs(export_dir))}",
                    received=f"{name!r}",
                    fix="Check the signature name.",
                )
            )
        if method not in known:
            raise ValueError(
                message(
                    f"Unknown method name for signature {name!r}",
                    expected=f"one of {list(known)}",
                    received=f"{method!r}",
                    fix="Use CLASSIFY_METHOD, REGRESS_METHOD or PREDICT_METHOD.",
                )
            )
        graph.signature_def[name].method_name = method
    atomic_write_bytes(export_dir / "saved_model.pb", saved_model.SerializeToString())
