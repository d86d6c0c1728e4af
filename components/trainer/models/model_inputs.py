"""Which transformed features become model inputs, and how the built-in models use each.

Every output of the Transform graph except the label is a model input: the
`<column>_xf` features generated from `features:` and any extra output a
user `transform.module` returns (so nothing a user transform computes is
dropped). The transform output's feature spec and schema say which outputs
exist and their types:

- `<column>_xf` of a declared feature: numeric or categorical as its
  `transform` says (categorical ids are embedded, and one-hot in the wide part).
- an extra float output (`[batch]` or `[batch, k]`): numeric, feeds the deep part.
- an extra int64 `[batch]` output: categorical ids, embedded (and one-hot in
  the wide part). Its id count is the `max + 1` tf.Transform records in the
  schema for `tft.compute_and_apply_vocabulary`, `tft.apply_vocabulary` and
  `tft.bucketize` outputs; ids with no recorded range are hashed into
  `HASH_BUCKETS` buckets first.
- anything else (text, variable-length or sparse outputs) is an error that
  names the output and how to fix it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import tensorflow as tf

from components.transform.config import CATEGORICAL, TransformConfig, transformed_name

__all__ = [
    "ModelInput",
    "HASH_BUCKETS",
    "from_config",
    "from_feature_spec",
    "from_transform_output",
    "input_keys",
    "single_media_input",
]

HASH_BUCKETS = 1000


@dataclasses.dataclass(frozen=True)
class ModelInput:
    """One model input.

    Attributes:
      name: key in the transformed features (and the Keras input's name).
      dtype: tf.int64 for categorical ids, tf.float32 for numbers.
      width: values per row (1 for a `[batch]` tensor, k for `[batch, k]`).
      num_tokens: how many distinct ids a categorical input takes; None for numbers.
      hashed: the ids have no known range: hash them into `num_tokens` buckets.
      column: the declared feature it comes from; None for an extra user output.
      media: `image` (float32 [height, width, channels] pixels, `dims`) or `text` (int64 word ids
        [sequence_length], 0 for padding, `num_tokens` ids); None for a table feature.
      dims: an image's (height, width, channels).
    """

    name: str
    dtype: tf.DType
    width: int = 1
    num_tokens: Optional[int] = None
    hashed: bool = False
    column: Optional[str] = None
    media: Optional[str] = None
    dims: tuple[int, ...] = ()

    @property
    def categorical(self) -> bool:
        """One categorical id per row (embedded, and one-hot in a wide part)."""
        return self.num_tokens is not None and self.media is None

    @property
    def shape(self) -> tuple:
        """The Keras input shape (without the batch dimension)."""
        if self.dims:
            return tuple(self.dims)
        return () if self.width == 1 else (self.width,)


def _declared(config: TransformConfig, column: str, vocabulary_sizes: Mapping[str, int]) -> ModelInput:
    feature = config.features[column]
    if feature["transform"] == "image":
        height, width = feature["image_size"]
        dims = (int(height), int(width), int(feature.get("channels") or 3))
        return ModelInput(transformed_name(column), tf.float32, column=column, media="image", dims=dims)
    if feature["transform"] == "text":
        tokens = config.num_tokens(column, vocabulary_sizes.get(column))
        length = int(feature["sequence_length"])
        return ModelInput(
            transformed_name(column), tf.int64, width=length, num_tokens=tokens, column=column, media="text"
        )
    if feature["transform"] in CATEGORICAL:
        tokens = config.num_tokens(column, vocabulary_sizes.get(column))
        return ModelInput(transformed_name(column), tf.int64, num_tokens=tokens, column=column)
    return ModelInput(transformed_name(column), tf.float32, column=column)


def from_config(config: TransformConfig, vocabulary_sizes: Mapping[str, int]) -> list[ModelInput]:
    """The `<column>_xf` inputs of the declared features only (no user transform outputs).

    Args:
      config: the feature table and label.
      vocabulary_sizes: column -> vocabulary size for `vocabulary` features.

    Returns:
      One ModelInput per declared feature, in the spec's order.
    """
    return [_declared(config, column, vocabulary_sizes) for column in config.features]


def _int_domains(schema) -> dict[str, tuple[int, int]]:
    domains = {}
    for feature in getattr(schema, "feature", []):
        if feature.HasField("int_domain") and feature.int_domain.HasField("max"):
            domains[feature.name] = (feature.int_domain.min, feature.int_domain.max)
    return domains


def _unusable(name: str, what: str, fix: str) -> ValueError:
    return ValueError(
        f"transform output `{name}` cannot be a model input. Expected: a dense float tensor ([batch] or "
        f"[batch, k]) or int64 ids ([batch]). Received: {what}. Fix: {fix} in your `transform.module`, or do "
        f"not return `{name}` from it."
    )


def _extra(name: str, spec: Any, domains: Mapping[str, tuple[int, int]]) -> ModelInput:
    if not isinstance(spec, tf.io.FixedLenFeature):
        return_dense = "return a dense tensor (e.g. `tf.sparse.to_dense` then `tf.reshape(x, [-1])`)"
        raise _unusable(name, f"a variable-length (sparse) {spec.dtype.name} tensor", return_dense)
    width = 1
    for size in spec.shape:
        width *= int(size)
    if spec.dtype == tf.string:
        raise _unusable(name, "text", "turn it into ids with `tft.compute_and_apply_vocabulary`")
    if spec.dtype == tf.float32:
        return ModelInput(name, tf.float32, width=width)
    if width != 1:
        raise _unusable(name, f"int64 ids of shape {list(spec.shape)}", "return one id per row, shape [batch]")
    if name in domains and domains[name][0] >= 0:
        return ModelInput(name, tf.int64, num_tokens=domains[name][1] + 1)
    return ModelInput(name, tf.int64, num_tokens=HASH_BUCKETS, hashed=True)


def from_transform_output(
    config: TransformConfig, tf_transform_output, vocabulary_sizes: Mapping[str, int]
) -> list[ModelInput]:
    """Every transformed feature but the label: declared `<column>_xf` first, then extra outputs by name.

    Args:
      config: the feature table and label.
      tf_transform_output: the Transform graph (`tft.TFTransformOutput`).
      vocabulary_sizes: column -> vocabulary size for `vocabulary` features.

    Returns:
      The model inputs.

    Raises:
      ValueError: see `from_feature_spec`.
    """
    return from_feature_spec(
        config,
        tf_transform_output.transformed_feature_spec(),
        tf_transform_output.transformed_metadata.schema,
        vocabulary_sizes,
    )


def from_feature_spec(
    config: TransformConfig, spec: Mapping[str, Any], schema, vocabulary_sizes: Mapping[str, int]
) -> list[ModelInput]:
    """The model inputs that a transform output's feature spec and schema describe.

    Args:
      config: the feature table and label.
      spec: the transformed feature spec (output name -> `tf.io.FixedLenFeature` / `VarLenFeature`).
      schema: the transformed schema (`schema_pb2.Schema`), for the id ranges tf.Transform recorded; or None.
      vocabulary_sizes: column -> vocabulary size for `vocabulary` features.

    Returns:
      Declared `<column>_xf` inputs in the spec's order, then extra outputs sorted by name.

    Raises:
      ValueError: the label is not among the outputs, or an extra output is text, sparse, or int64 ids of
        more than one value per row.
    """
    if config.label_name not in spec:
        raise ValueError(
            f"the Transform output has no label `{config.label_name}`. Expected: the label among the outputs. "
            f"Received: outputs {sorted(spec)}. Fix: return the `outputs` dict you were given, with its "
            f"`{config.label_name}` entry, from your `transform.module` function."
        )
    declared = {transformed_name(column): column for column in config.features}
    inputs = [_declared(config, declared[name], vocabulary_sizes) for name in declared if name in spec]
    domains = _int_domains(schema) if schema is not None else {}
    extras = sorted(name for name in spec if name not in declared and name != config.label_name)
    return inputs + [_extra(name, spec[name], domains) for name in extras]


def input_keys(inputs: Sequence[ModelInput]) -> list[str]:
    """The transformed-feature keys the model reads, in order."""
    return [model_input.name for model_input in inputs]


def single_media_input(inputs: Sequence[ModelInput], media: str, model_type: str) -> ModelInput:
    """The one input of kind `media` (`image` or `text`) a media model reads.

    Raises:
      ValueError: not exactly one such input; the message names `model_type` and the inputs found.
    """
    found = [used for used in inputs if used.media == media]
    if len(found) != 1:
        raise ValueError(
            f"`model.type: {model_type}` takes exactly one `transform: {media}` feature. Received: "
            f"{len(found)} ({[used.column for used in found]}). Fix `features:`."
        )
    return found[0]
