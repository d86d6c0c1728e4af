"""What the Transform and Trainer components need to know about features.

It travels as a plain JSON-able dict inside TFX's `custom_config`, so it is
recorded in ML Metadata and takes part in the cache key.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

__all__ = ["TransformConfig", "transformed_name", "CATEGORICAL"]

CATEGORICAL = frozenset({"vocabulary", "bucketize", "hash", "categorical"})


def transformed_name(column: str) -> str:
    return f"{column}_xf"


@dataclasses.dataclass(frozen=True)
class TransformConfig:
    """Features (column -> settings dict), the label and an optional user hook."""

    features: dict[str, dict[str, Any]]
    label_name: str
    task: str
    label_column: Optional[str] = None
    label_expression: Optional[str] = None
    user_module: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TransformConfig:
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})

    @property
    def label_columns(self) -> list[str]:
        """Raw columns the label reads: never model inputs at serving time."""
        if self.label_column is not None:
            return [self.label_column]
        from components.transform.label_expression import column_names

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
        raise ValueError(f"feature `{column}` is not categorical (transform `{kind}`).")
