"""A blessed SavedModel called on serialized tf.Examples: its `serving_default` signature, outputs as columns.

The built-in Trainer's export (`components.trainer.saved_model.export`)
gives `serving_default` one string input (serialized tf.Examples) and, for a
classification model, `label` (the predicted class name), `scores` (one per
class, named by `classes`) and, for two classes, `probability`; for a
regression model `prediction`. Each becomes a column: `label`,
`score_<class>`, `probability`, `prediction`; any other output of a user's
model is a column (or `<name>_<i>` per value of a 2-D output). The
`serving_raw` signature's input types say how each feature is typed in the
tf.Example; a model without it (a `training.module_file` model) is typed by
the schema its Trainer was given (`schema_feature_kinds`).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from pipelines.scoring.inputs import kind_of_dtype

__all__ = ["ScoringModel", "schema_feature_kinds"]


def _decoded(values: np.ndarray) -> pa.Array:
    if values.dtype == object:
        return pa.array([v.decode("utf-8", "replace") for v in values], pa.string())
    return pa.array(values)


class ScoringModel:
    """A loaded SavedModel: `feature_kinds` for the input encoding, `score(examples)` for output columns."""

    def __init__(self, path: str):
        import tensorflow as tf

        from serving.custom_ops import register_ops_for_saved_model

        register_ops_for_saved_model(path)  # a `tokenizer: wordpiece` model runs tensorflow-text's ops
        self.path = path
        self._loaded = tf.saved_model.load(path)
        self._signature = self._loaded.signatures["serving_default"]
        inputs = self._signature.structured_input_signature[1]
        if len(inputs) != 1 or next(iter(inputs.values())).dtype != tf.string:
            raise ValueError(
                f"{path}: `serving_default` takes {sorted(inputs)}. Expected one string input of serialized "
                "tf.Examples (the built-in Trainer's export and TFX's convention). Export that signature."
            )
        self._input = next(iter(inputs))
        self.feature_kinds = _raw_feature_kinds(path)

    def score(self, examples: list[bytes]) -> pa.RecordBatch:
        """The model's outputs for `examples`, one row each."""
        import tensorflow as tf

        outputs = {k: v.numpy() for k, v in self._signature(**{self._input: tf.constant(examples)}).items()}
        names = outputs.pop("classes", None)
        arrays, columns = [], []
        for key in sorted(outputs):
            values = outputs[key]
            if values.ndim == 1:
                arrays.append(_decoded(values))
                columns.append(key)
                continue
            values = values.reshape(len(values), -1)
            labels = (
                [n.decode("utf-8") for n in names[0]]
                if key == "scores" and names is not None and len(names)
                else [str(i) for i in range(values.shape[1])]
            )
            prefix = "score" if key == "scores" else key
            for index, label in enumerate(labels):
                arrays.append(_decoded(values[:, index]))
                columns.append(f"{prefix}_{label}")
        return pa.RecordBatch.from_arrays(arrays, names=columns)


def _raw_feature_kinds(path: str) -> dict[str, int] | None:
    """Each feature -> its ColumnKind, from the `serving_raw` signature's inputs; None without that signature."""
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as handle:
        saved_model.ParseFromString(handle.read())
    signature = saved_model.meta_graphs[0].signature_def.get("serving_raw")
    if signature is None:
        return None
    return {name: kind_of_dtype(tf.dtypes.as_dtype(info.dtype).name) for name, info in signature.inputs.items()}


def schema_feature_kinds(schema_path: str) -> dict[str, int]:
    """Each feature of a TFMD schema (`schema.pbtxt`) -> its ColumnKind: INT, FLOAT, else STRING (BYTES)."""
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    with open(schema_path, encoding="utf-8") as handle:
        schema = text_format.Parse(handle.read(), schema_pb2.Schema())
    dtypes = {schema_pb2.INT: "int64", schema_pb2.FLOAT: "float32"}
    return {feature.name: kind_of_dtype(dtypes.get(feature.type, "string")) for feature in schema.feature}
