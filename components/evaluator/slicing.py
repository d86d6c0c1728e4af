"""`evaluation.slices`: TFMA slicing specs, numeric columns cut into quantile buckets, per-slice gates.

Before TFMA runs, the executor reads the slice columns of the eval split once
(`read_columns`) and makes a `SlicePlan`: each numeric column with more distinct
values than `evaluation.slice_buckets` gets quantile boundaries of the eval
split, and every slice gets its row count. `add_slicing` then writes the plan
into the EvalConfig with TFMA's own means only, so nothing outside the config
has to reach the Beam workers:

- each slice spec becomes a `SlicingSpec` with `slice_keys_sql`; a bucketed
  column is a SQL `CASE` over its boundaries, so the slice reads
  `trip_start_hour=[6, 12)`:

      >>> plan = SlicePlan(buckets={"trip_start_hour": (6.0, 12.0, 18.0)}, counts={})
      >>> slice_sql(("payment_type", "trip_start_hour"), plan)  # doctest: +ELLIPSIS
      "SELECT STRUCT(`payment_type`, CASE WHEN `trip_start_hour` < 6.0 THEN '< 6' ..."

- every threshold becomes TFMA's `per_slice_thresholds` on the overall slice
  (TFMA would apply a plain `threshold` to every slice); one with
  `per_slice: true` also gets one `SlicingSpec(feature_values=...)` per slice
  holding at least `min_examples` rows (smaller slices are computed and
  reported, never gated). TFMA then checks each slice against the bounds and,
  with a baseline model, against the baseline's value on the same slice.
- an `example_count` metric, so every slice carries its number of rows.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import tensorflow_model_analysis as tfma

__all__ = [
    "SlicePlan",
    "add_slicing",
    "make_plan",
    "read_columns",
    "slice_name",
    "slice_sql",
    "bucket_labels",
]

_BATCH = 4096


@dataclasses.dataclass(frozen=True)
class SlicePlan:
    """What the eval split says about the slices.

    Args:
      buckets: numeric column -> its inner bucket boundaries (ascending), for the columns bucketed.
      counts: slice name (`slice_name`) -> its rows in the eval split.
    """

    buckets: dict[str, tuple[float, ...]]
    counts: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"buckets": {k: list(v) for k, v in self.buckets.items()}, "counts": dict(self.counts)}


def read_columns(split_uri: str, columns: Sequence[str]) -> dict[str, list]:
    """One value per row (None when missing) of each of `columns` in the TFRecord files under `split_uri`.

    TensorFlow's example parser reads `columns` alone (typed from the first batch, which tfx_bsl's
    decoder reads whole); a column missing from the first batch makes tfx_bsl decode every batch.

    Raises:
      ValueError: the split holds no files.
    """
    import tensorflow as tf
    from tfx_bsl.coders import example_coder

    files = sorted(tf.io.gfile.glob(os.path.join(split_uri, "*")))  # local or object-store folders
    if not files:
        raise ValueError(f"the eval split {split_uri} holds no files. Expected TFRecord files from ExampleGen.")
    compression = "GZIP" if files[0].endswith(".gz") else ""
    batches = tf.data.TFRecordDataset(files, compression_type=compression).batch(_BATCH)
    first = next(iter(batches), None)
    if first is None:
        return {column: [] for column in columns}
    records = example_coder.ExamplesToRecordBatchDecoder().DecodeBatch(first.numpy().tolist())
    features = _parse_spec(records, columns)
    if features is None:
        return _decode_columns(batches, columns)
    values: dict[str, list] = {column: [] for column in columns}
    parsed = batches.map(lambda batch: tf.io.parse_example(batch, features), num_parallel_calls=2)
    for batch in parsed:
        for column, sparse in batch.items():
            values[column].extend(_first_values(sparse))
    return values


def _parse_spec(records, columns: Sequence[str]) -> Optional[dict]:
    """`tf.io.parse_example`'s features for `columns`, typed as in `records`; None when one is not there."""
    import pyarrow as pa
    import tensorflow as tf

    features = {}
    for column in columns:
        index = records.schema.get_field_index(column)
        if index < 0:
            return None
        value_type = records.schema.field(index).type.value_type
        dtype = (
            tf.int64
            if pa.types.is_integer(value_type)
            else tf.float32
            if pa.types.is_floating(value_type)
            else tf.string
        )
        features[column] = tf.io.VarLenFeature(dtype)
    return features


def _first_values(sparse) -> list:
    """The first value of each row of a parsed `VarLenFeature` (None when the row has none), bytes as text."""
    rows = sparse.dense_shape.numpy()[0]
    indices = sparse.indices.numpy()
    first = indices[:, 1] == 0
    values = sparse.values.numpy()[first]
    if values.dtype == object:
        values = np.array([v.decode("utf-8", "replace") for v in values.tolist()] or [], dtype=object)
    cells = np.full(rows, None, dtype=object)
    cells[indices[first, 0]] = values
    return cells.tolist()


def _decode_columns(batches, columns: Sequence[str]) -> dict[str, list]:
    """`read_columns` by tfx_bsl's decoder, every feature of every batch."""
    from tfx_bsl.coders import example_coder

    decoder = example_coder.ExamplesToRecordBatchDecoder()
    values: dict[str, list] = {column: [] for column in columns}
    for batch in batches:
        records = decoder.DecodeBatch(batch.numpy().tolist())
        for column in columns:
            index = records.schema.get_field_index(column)
            if index < 0:
                values[column].extend([None] * records.num_rows)
                continue
            for cell in records.column(index).to_pylist():
                value = cell[0] if cell else None
                values[column].append(value.decode("utf-8", "replace") if isinstance(value, bytes) else value)
    return values


def _number(value: float) -> str:
    return f"{value:g}"


def bucket_labels(boundaries: Sequence[float]) -> list[str]:
    """The slice value of each bucket: `< b0`, `[b0, b1)`, ..., `>= bn`."""
    labels = [f"< {_number(boundaries[0])}"]
    labels += [f"[{_number(lo)}, {_number(hi)})" for lo, hi in zip(boundaries, boundaries[1:])]
    return labels + [f">= {_number(boundaries[-1])}"]


def _bucketed(values: list, boundaries: Sequence[float]) -> list:
    """Each value's bucket label (`bucket_labels`), None kept: the SQL `CASE` of `slice_sql` in NumPy."""
    labels = bucket_labels(boundaries)
    present = [v for v in values if v is not None]
    found = iter(np.searchsorted(boundaries, np.asarray(present, dtype=np.float64), side="right").tolist())
    return [None if v is None else labels[next(found)] for v in values]


def _boundaries(values: list, buckets: int) -> Optional[tuple[float, ...]]:
    """Quantile boundaries of a numeric column with more than `buckets` distinct values; None otherwise."""
    present = [v for v in values if v is not None]
    if not present or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return None
    array = np.asarray(present, dtype=np.float64)
    if len(np.unique(array)) <= buckets:
        return None
    cuts = np.quantile(array, [i / buckets for i in range(1, buckets)])
    cuts = np.unique(cuts[cuts > array.min()])  # a bucket below the minimum would be empty
    return tuple(float(c) for c in cuts) or None


def slice_name(columns: Sequence[str], values: Sequence[Any]) -> str:
    """`payment_type=Cash, trip_start_hour=[6, 12)`: how verdicts, records and reports name a slice."""
    return ", ".join(f"{column}={value}" for column, value in zip(columns, values))


def make_plan(
    slices: Sequence[Sequence[str]], values: dict[str, list], buckets: int
) -> tuple[SlicePlan, dict[tuple[str, ...], Counter]]:
    """The bucket boundaries of the numeric slice columns and the rows of every slice.

    Args:
      slices: the columns of each slice spec.
      values: `read_columns` of the eval split.
      buckets: quantile buckets per numeric column (`evaluation.slice_buckets`).

    Returns:
      The `SlicePlan`, and per slice spec the Counter of its value tuples (as TFMA will name them).
    """
    plan_buckets = {}
    for column in dict.fromkeys(c for spec in slices for c in spec):
        cuts = _boundaries(values[column], buckets)
        if cuts is not None:
            plan_buckets[column] = cuts
    shown = {
        column: _bucketed(values[column], plan_buckets[column]) if column in plan_buckets else values[column]
        for column in values
    }
    order = {column: {label: i for i, label in enumerate(bucket_labels(cuts))} for column, cuts in plan_buckets.items()}

    def in_order(item):  # buckets from low to high, other values as text
        return [(order[c][v], "") if c in order else (0, str(v)) for c, v in zip(spec, item[0])]

    per_spec: dict[tuple[str, ...], Counter] = {}
    counts: dict[str, int] = {}
    for spec in slices:
        rows = zip(*(shown[column] for column in spec))
        counter = Counter(row for row in rows if None not in row)
        per_spec[tuple(spec)] = Counter(dict(sorted(counter.items(), key=in_order)))
        for row, count in per_spec[tuple(spec)].items():
            counts[slice_name(spec, row)] = count
    return SlicePlan(buckets=plan_buckets, counts=counts), per_spec


def _sql_column(column: str, plan: SlicePlan) -> str:
    quoted = f"`{column}`"
    cuts = plan.buckets.get(column)
    if not cuts:
        return quoted
    labels = bucket_labels(cuts)
    whens = " ".join(f"WHEN {quoted} < {float(cut)!r} THEN '{label}'" for cut, label in zip(cuts, labels))
    return f"CASE {whens} ELSE '{labels[-1]}' END AS {quoted}"


def slice_sql(columns: Sequence[str], plan: SlicePlan) -> str:
    """TFMA's `slice_keys_sql` for one slice spec: the columns, numeric ones bucketed."""
    selected = ", ".join(_sql_column(column, plan) for column in columns)
    sources = ", ".join(f"example.`{column}`" for column in columns)
    return f"SELECT STRUCT({selected}) FROM {sources}"


def _gate_per_slice(
    config: tfma.MetricConfig, gated_slices: list[tuple[tfma.SlicingSpec, int]], thresholds: dict[str, dict]
) -> None:
    """Moves the config's threshold to the overall slice, plus its slices when its gate is `per_slice`.

    TFMA applies a MetricConfig's plain `threshold` to every slice computed, so with
    slices declared a gate without `per_slice` would hold on each of them too.
    """
    if not config.HasField("threshold"):
        return
    name = json.loads(config.config or "{}").get("name", "").split("@")[0]
    gate = thresholds.get(name) or {}
    specs = [tfma.SlicingSpec()]
    if gate.get("per_slice"):
        minimum = int(gate.get("min_examples") or 30)
        specs += [spec for spec, count in gated_slices if count >= minimum]
    config.per_slice_thresholds.add(slicing_specs=specs, threshold=config.threshold)
    config.ClearField("threshold")


def add_slicing(
    eval_config: tfma.EvalConfig,
    slices: Sequence[Sequence[str]],
    plan: SlicePlan,
    per_spec: dict[tuple[str, ...], Counter],
    thresholds: dict[str, dict],
) -> None:
    """Adds the slicing specs, the per-slice gates and `example_count` to `eval_config` (see the module docstring).

    Args:
      eval_config: the EvalConfig `build_eval_config` made; changed in place.
      slices: the columns of each slice spec.
      plan, per_spec: `make_plan`'s results for the eval split.
      thresholds: the request's thresholds (spec name -> gate with `per_slice`, `min_examples`).
    """
    for columns in slices:
        eval_config.slicing_specs.append(tfma.SlicingSpec(slice_keys_sql=slice_sql(columns, plan)))
    gated_slices = [
        (tfma.SlicingSpec(feature_values={c: str(v) for c, v in zip(columns, row)}), count)
        for columns, counter in per_spec.items()
        for row, count in counter.items()
    ]
    for spec in eval_config.metrics_specs:
        for config in spec.metrics:
            _gate_per_slice(config, gated_slices, thresholds)
    names = {json.loads(m.config or "{}").get("name") for s in eval_config.metrics_specs for m in s.metrics}
    if "example_count" not in names and eval_config.metrics_specs:
        eval_config.metrics_specs[0].metrics.append(
            tfma.MetricConfig(class_name="ExampleCount", config=json.dumps({"name": "example_count"}))
        )
