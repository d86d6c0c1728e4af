"""What the Transform and Trainer components need to know about features.

It travels as a plain JSON-able dict inside TFX's `custom_config`, so it is
recorded in ML Metadata and takes part in the cache key.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from components.common.names import tensor_name
from components.transform.expressions import column_names

__all__ = ["TransformConfig", "transformed_name", "vocabulary_name", "CATEGORICAL", "MEDIA", "WORDPIECE_VOCAB_SIZE"]

CATEGORICAL = frozenset({"vocabulary", "bucketize", "hash", "categorical"})
# Several values per row: images ([height, width, channels] floats) and texts (word ids).
MEDIA = frozenset({"image", "text"})
# `tokenizer: wordpiece` without `vocab_size`: the most pieces the learned vocabulary keeps.
WORDPIECE_VOCAB_SIZE = 8_000


def transformed_name(column: str) -> str:
    """`<column>_xf`, with the column's TensorFlow-safe spelling (`components.common.names.tensor_name`)."""
    return f"{tensor_name(column)}_xf"


def vocabulary_name(column: str) -> str:
    """The tf.Transform vocabulary file name of a `vocabulary` feature (tft rewrites spaces and symbols itself)."""
    return f"vocab_{tensor_name(column)}"


@dataclasses.dataclass(frozen=True)
class TransformConfig:
    """Features (column -> settings dict), the label and an optional user hook.

    `classes` (classification): the class names in index order, as the label's
    string form (integers as `"1"`, not `"1.0"`); the label tensor is the index
    of its class and Transform stores this list as the `label_classes`
    vocabulary. Binary: index 1 is `positive_class`. None for regression, and
    for classification means the classes `0`/`1` (a label expression's).
    """

    features: dict[str, dict[str, Any]]
    label_name: str
    task: str
    label_column: Optional[str] = None
    label_expression: Optional[str] = None
    user_module: Optional[str] = None
    classes: Optional[list[str]] = None
    positive_class: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TransformConfig:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in fields}
        if values.get("classes") is not None:
            values["classes"] = list(values["classes"])
        return cls(**values)

    @property
    def class_names(self) -> list[str]:
        """The class names in index order (empty for regression)."""
        if self.task != "classification":
            return []
        return list(self.classes) if self.classes else ["0", "1"]

    @property
    def num_classes(self) -> int:
        """How many classes a classification label has (0 for regression)."""
        return len(self.class_names)

    @property
    def binary(self) -> bool:
        """A two-class classification label (one sigmoid unit, `probability` output)."""
        return self.num_classes == 2

    @property
    def label_columns(self) -> list[str]:
        """Raw columns the label reads: never model inputs at serving time."""
        if self.label_column is not None:
            return [self.label_column]

        return [c for c in column_names(self.label_expression) if c not in self.features]

    def num_tokens(self, column: str, vocabulary_size: Optional[int] = None) -> int:
        """How many distinct ids a categorical feature's transform can output."""
        feature = self.features[column]
        kind = feature["transform"]
        if kind == "vocabulary":
            size = feature.get("top_k") or vocabulary_size or 0
            return size + feature.get("oov_buckets", 1)
        if kind == "bucketize":
            return feature["buckets"]
        if kind == "hash":
            return feature["hash_buckets"]
        if kind == "categorical":
            return feature["num_buckets"]
        if kind == "text" and feature.get("tokenizer") == "wordpiece":  # the vocabulary's line numbers, [PAD] = 0
            return vocabulary_size or feature.get("vocab_size") or WORDPIECE_VOCAB_SIZE
        if kind == "text":  # ids from 1, 0 pads
            size = feature.get("top_k") or vocabulary_size or 0
            return size + max(feature.get("oov_buckets", 1), 1) + 1
        raise ValueError(f"feature `{column}` is not categorical (transform `{kind}`).")
