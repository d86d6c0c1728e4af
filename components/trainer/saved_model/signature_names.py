"""SignatureDef input keys spelled as the data's columns, whatever their text.

`tf.function` argument names and TensorFlow op names must be plain
identifiers, so the export names the `serving_raw` inputs after
`components.common.names.tensor_name(column)` (`mean_radius_42d477`). A
SignatureDef input key may be any string: TF Serving (and our embedded server)
map a request's key to the TensorInfo's tensor name. Rewriting the keys in
`saved_model.pb` after saving lets JSON clients send
`{"instances": [{"mean radius": 1.2}]}`.

`tf.saved_model.load(...).signatures["serving_raw"]` still takes the
tensor names as keyword arguments: the loaded function's arguments come from
the object graph, not from the SignatureDef.
"""

from __future__ import annotations

import os

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

__all__ = ["rename_signature_inputs"]


def rename_signature_inputs(export_dir: str, signature: str, renames: dict[str, str]) -> int:
    """Renames input keys of one SignatureDef in `export_dir/saved_model.pb` (atomically).

    Args:
        export_dir: the SavedModel folder.
        signature: the signature's key, e.g. `serving_raw`.
        renames: current key -> new key; keys that are equal are skipped.

    Returns:
        How many inputs were renamed.

    Raises:
        ValueError: a new key is already used by another input of the signature.
    """
    changes = {old: new for old, new in renames.items() if old != new}
    if not changes:
        return 0
    path = os.path.join(export_dir, "saved_model.pb")
    saved_model = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as handle:
        saved_model.ParseFromString(handle.read())
    renamed = 0
    for meta_graph in saved_model.meta_graphs:
        if signature not in meta_graph.signature_def:
            continue
        inputs = meta_graph.signature_def[signature].inputs
        for old, new in changes.items():
            if old not in inputs:
                continue
            if new in inputs:
                raise ValueError(
                    f"signature `{signature}` already has an input `{new}`; cannot rename `{old}` to it. "
                    "Expected unique column names. Rename one of the columns."
                )
            inputs[new].CopyFrom(inputs[old])
            del inputs[old]
            renamed += 1
    tmp = path + ".tmp"
    with tf.io.gfile.GFile(tmp, "wb") as handle:
        handle.write(saved_model.SerializeToString())
    tf.io.gfile.rename(tmp, path, overwrite=True)
    return renamed
