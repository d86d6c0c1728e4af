"""Missing cells: what replaces them before a feature's transform, and the missing indicator.

A feature's `impute` (see `pipelines.spec.models.FeatureSpec`):
- `fill`: the declared `fill` value;
- `mean` / `median`: of the column's present values in the data Transform
  analyses (the train split), computed by `tft.mean` / `tft.quantiles`, so the
  serving graph imputes with the same number;
- `none`: 0 (numbers) or the empty string (text), a value of its own.

Unset, it is `fill` when `fill` is set, `mean` for `zscore`, `minmax`, `log`,
`identity` and `bucketize`, and `none` otherwise (`categorical` ids, text). A
column read as dense (no missing cell possible) gets no analyzer.
`transform_imputed` applies a numeric transform to a mean/median-imputed
column in one analysis pass.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
import tensorflow_transform as tft

from components.common.names import tensor_name

__all__ = [
    "impute_kind",
    "impute",
    "transform_imputed",
    "missing_indicator",
    "indicator_name",
    "indicators",
    "MEAN_IMPUTED_TRANSFORMS",
]

MEAN_IMPUTED_TRANSFORMS = frozenset({"zscore", "minmax", "log", "identity", "bucketize"})
# tft.quantiles' approximation error for the median.
_MEDIAN_EPSILON = 0.001


def impute_kind(feature: dict[str, Any]) -> str:
    """The effective `impute` of a feature's settings dict.

    Args:
        feature: the feature's settings (`transform`, optional `fill`, `impute`).

    Returns:
        One of `fill`, `mean`, `median`, `none`.
    """
    kind = feature.get("impute")
    if kind:
        return kind
    if feature.get("fill") is not None:
        return "fill"
    return "mean" if feature["transform"] in MEAN_IMPUTED_TRANSFORMS else "none"


def _dense(value: tf.Tensor | tf.SparseTensor, default: tf.Tensor) -> tf.Tensor:
    if isinstance(value, tf.SparseTensor):
        shape = [value.dense_shape[0], 1]
        value = tf.sparse.to_dense(tf.SparseTensor(value.indices, value.values, shape), default_value=default)
    return tf.reshape(value, [-1])


def missing_indicator(value: tf.Tensor | tf.SparseTensor) -> tf.Tensor:
    """[batch] float32: 1.0 where the cell is missing, else 0.0."""
    if isinstance(value, tf.SparseTensor):
        ones = tf.SparseTensor(value.indices, tf.ones_like(value.values, tf.float32), value.dense_shape)
        return 1.0 - _dense(ones, tf.constant(0.0))
    return tf.zeros_like(tf.reshape(value, [-1]), tf.float32)


def indicator_name(column: str) -> str:
    """The transformed output that says a column's cell was missing: `<tensor name>_missing_xf`."""
    return f"{tensor_name(column)}_missing_xf"


def indicators(features: dict[str, dict[str, Any]], inputs: dict) -> dict[str, tf.Tensor]:
    """The missing-indicator outputs of the features that ask for one (`missing_indicator: true`).

    Every float output of the transform is a model input (`components.trainer.models.model_inputs`), so
    these reach the model, and the serving graph computes them from the raw request.

    Args:
        features: column -> settings dict.
        inputs: the raw inputs Transform gives the preprocessing_fn.

    Returns:
        `indicator_name(column)` -> [batch] float32 of 0/1.
    """
    return {
        indicator_name(column): missing_indicator(inputs[column])
        for column, feature in features.items()
        if feature.get("missing_indicator")
    }


def _as_float(value: tf.Tensor) -> tf.Tensor:
    if value.dtype == tf.string:
        # A column SchemaGen read as text (e.g. no values in the sample): empty counts as 0.
        return tf.strings.to_number(tf.where(value == "", "0", value), tf.float32)
    return tf.cast(value, tf.float32)


def _statistic(kind: str, present: tf.Tensor) -> tf.Tensor:
    """The mean or median of the present values (0 when there are none)."""
    if kind == "mean":
        statistic = tft.mean(present)
    else:
        statistic = tf.reshape(tft.quantiles(present, num_buckets=2, epsilon=_MEDIAN_EPSILON), [-1])[0]
    return tf.where(tf.math.is_nan(statistic), tf.zeros_like(statistic), statistic)


def impute(feature: dict[str, Any], value: tf.Tensor | tf.SparseTensor) -> tf.Tensor:
    """A dense [batch] tensor of `value` with its missing cells replaced as `feature` says.

    Args:
        feature: the feature's settings dict (`transform`, `fill`, `impute`).
        value: the raw column, sparse when cells may be missing.

    Returns:
        `fill`/`none`: the column's own dtype. `mean`/`median`: float32.
    """
    kind = impute_kind(feature)
    if kind in ("fill", "none"):
        fill = feature.get("fill") if kind == "fill" else None
        if value.dtype == tf.string:
            default = tf.constant("" if fill is None else str(fill), tf.string)
        else:
            default = tf.cast(tf.constant(0.0 if fill is None else float(fill)), value.dtype)
        return _dense(value, default)
    if not isinstance(value, tf.SparseTensor):
        return _as_float(tf.reshape(value, [-1]))  # dense: nothing is missing, no analyzer needed
    present = _as_float(value.values)
    filled = _dense(tf.SparseTensor(value.indices, present, value.dense_shape), tf.constant(0.0))
    return tf.where(missing_indicator(value) > 0.5, _statistic(kind, present), filled)


def _z_score(x: tf.Tensor, present: tf.Tensor, mean: tf.Tensor | None = None) -> tf.Tensor:
    """(x - mean) / std of the present values; x - mean when they do not vary (as tft.scale_to_z_score)."""
    mean = tft.mean(present) if mean is None else mean
    std = tf.sqrt(tft.var(present))
    return tf.where(tf.not_equal(std, 0.0), (x - mean) / std, x - mean)


def transform_imputed(feature: dict[str, Any], value: tf.Tensor | tf.SparseTensor) -> tf.Tensor | None:
    """A numeric transform of a column imputed with its mean or median, in one analysis pass.

    `tft.scale_to_z_score(impute(...))` would feed one analyzer's output into
    another, which makes tf.Transform analyse the data twice (and TFX 1.16's
    Transform fails on the second pass with this Beam: `deep_copy`'s
    `AppliedPTransform` call). Here every statistic is computed over the
    present values directly and the scaling is done with them, as tft's
    mappers do: z-score (`zscore`, and `log` after log1p), min-max (0.5 when
    min equals max, where tft gives the sigmoid), quantile buckets.

    Args:
        feature: the feature's settings dict.
        value: the raw column.

    Returns:
        The transformed [batch] tensor, or None when this path does not apply
        (no mean/median imputation, a dense column, or a non-numeric transform):
        then impute and transform the usual way.
    """
    kind = feature["transform"]
    if impute_kind(feature) not in ("mean", "median") or not isinstance(value, tf.SparseTensor):
        return None
    if kind not in ("zscore", "minmax", "log", "bucketize"):
        return None
    present = _as_float(value.values)
    if kind == "zscore" and impute_kind(feature) == "mean":
        # The mean serves both as the fill and for the scaling: one analyzer fewer.
        mean = tft.mean(present)
        filled = _dense(tf.SparseTensor(value.indices, present, value.dense_shape), tf.constant(0.0))
        return _z_score(tf.where(missing_indicator(value) > 0.5, mean, filled), present, mean)
    imputed = impute(feature, value)
    if kind == "zscore":
        return _z_score(imputed, present)
    if kind == "log":
        return _z_score(tf.math.log1p(tf.maximum(imputed, 0.0)), tf.math.log1p(tf.maximum(present, 0.0)))
    if kind == "minmax":
        low, high = tft.min(present), tft.max(present)
        scaled = (imputed - low) / tf.where(high > low, high - low, tf.ones_like(high))
        return tf.where(high > low, scaled, tf.fill(tf.shape(imputed), 0.5))
    buckets = feature["buckets"]
    boundaries = tft.quantiles(present, buckets, epsilon=min(1.0 / buckets, 0.01))
    return tft.apply_buckets(imputed, boundaries)
