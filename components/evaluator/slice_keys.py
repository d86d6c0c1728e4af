"""The slice keys of `evaluation.slices` computed in NumPy: the keys TFMA's SQL slicer computes with ZetaSQL.

`evaluation.slices` reach TFMA as `slice_keys_sql` (`slicing.slice_sql`).
TFMA's SqlSliceKeyExtractor converts every feature of each batch to an Arrow
record batch and runs each query in ZetaSQL; with two slice specs on 500k
eval rows that was about 40% of the Evaluator's time. The queries are ours, so
their meaning is known: a row's key per slice spec is the spec's columns with
their values as text, a bucketed column's value as its `CASE` label, and a
row without a value in one of the columns is in no slice of that spec (several
values: one key per combination, as the query's joins give).

`BatchSliceKeysFn` computes that for a batch and sets the same
`slice_key_types` value TFMA's DoFn sets. It hands a batch to TFMA's own DoFn
(ZetaSQL) when it would not give the same text: a slice column among the
transformed features (TFMA slices on those first), a column of floats that
are not bucketed (ZetaSQL's float text), values that are neither dense arrays
nor `VarLenTensorValue`s, bytes that are not UTF-8. `fast_slice_keys_stage`
returns the stage only when every `slice_keys_sql` of the EvalConfig is one
`slice_sql` writes (parsed back and written again to the same text).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
from typing import Any, Optional

import apache_beam as beam
import numpy as np
import pandas as pd
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis import constants
from tensorflow_model_analysis.api import types
from tensorflow_model_analysis.extractors import sql_slice_key_extractor
from tensorflow_model_analysis.slicer import slicer_lib

from components.evaluator.slicing import SlicePlan, bucket_labels, slice_sql

__all__ = ["SliceQuery", "parse_slice_sql", "slice_keys", "BatchSliceKeysFn", "fast_slice_keys_stage"]

_SOURCE = re.compile(r"example\.`([^`]+)`")


@dataclasses.dataclass(frozen=True)
class SliceQuery:
    """One slice spec's columns and the boundaries of its bucketed columns."""

    columns: tuple[str, ...]
    buckets: dict[str, tuple[float, ...]]


def parse_slice_sql(sql: str) -> Optional[SliceQuery]:
    """The `SliceQuery` that `slicing.slice_sql` wrote as `sql`; None for any other text."""
    columns = tuple(_SOURCE.findall(sql.rpartition(" FROM ")[2]))
    if not columns:
        return None
    buckets = {}
    try:
        for column in columns:
            cuts = tuple(float(c) for c in re.findall(rf"WHEN `{re.escape(column)}` < (\S+) THEN", sql))
            if cuts:
                buckets[column] = cuts
    except ValueError:
        return None
    query = SliceQuery(columns, buckets)
    return query if slice_sql(columns, SlicePlan(buckets=buckets, counts={})) == sql else None


class _NotCovered(Exception):
    """A batch whose keys this module would not compute as ZetaSQL does (module docstring)."""


def _cells(value: Any, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A feature's values and the row of each, in the order TFMA's Arrow conversion lists them."""
    if isinstance(value, np.ndarray) and value.ndim in (1, 2) and len(value) == rows:
        per_row = 1 if value.ndim == 1 else value.shape[1]
        return value.reshape(-1), np.repeat(np.arange(rows), per_row)
    if isinstance(value, types.VarLenTensorValue) and value.indices.ndim == 2:
        return np.asarray(value.values), np.asarray(value.indices[:, 0], dtype=np.int64)
    raise _NotCovered(type(value).__name__)


def _texts(values: np.ndarray, cuts: Optional[tuple[float, ...]]) -> tuple[np.ndarray, list[str]]:
    """Each value's code and the text of each code: the bucket label, the integer, or the decoded string."""
    kind = values.dtype.kind
    if cuts is not None:
        if kind not in "iuf":
            raise _NotCovered(f"bucketed {values.dtype}")
        return np.searchsorted(cuts, values.astype(np.float64), side="right"), bucket_labels(cuts)
    if kind not in "iuOSU":
        raise _NotCovered(f"{values.dtype} values not bucketed")
    codes, uniques = pd.factorize(values)
    if kind in "iu":
        return codes, [str(v) for v in uniques.tolist()]
    try:
        return codes, [v.decode("utf-8") if isinstance(v, bytes) else _text(v) for v in uniques.tolist()]
    except UnicodeDecodeError as error:
        raise _NotCovered("bytes that are not UTF-8") from error


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise _NotCovered(type(value).__name__)


def _spec_keys(query: SliceQuery, features: dict, rows: int) -> np.ndarray | list[list[tuple]]:
    """One slice spec's keys: an array of one key per row when every row has one value of each column,
    else a list of each row's keys."""
    columns = []
    for column in query.columns:
        if column not in features:
            return [[] for _ in range(rows)]  # a column missing from the batch: no row has a value
        values, at = _cells(features[column], rows)
        columns.append((column, *_texts(values, query.buckets.get(column)), at))
    if rows and all(len(at) == rows and np.array_equal(at, np.arange(rows)) for *_, at in columns):
        combined = np.zeros(rows, dtype=np.int64)
        for _, codes, texts, _ in columns:
            combined = combined * len(texts) + codes
        _, first_rows, inverse = np.unique(combined, return_index=True, return_inverse=True)
        keys = np.empty(len(first_rows), dtype=object)
        for i, row in enumerate(first_rows.tolist()):
            keys[i] = tuple((column, texts[codes[row]]) for column, codes, texts, _ in columns)
        return keys[inverse]
    per_row: list[list[list]] = [[[] for _ in columns] for _ in range(rows)]
    for i, (column, codes, texts, at) in enumerate(columns):
        for code, row in zip(codes.tolist(), at.tolist()):
            per_row[row][i].append((column, texts[code]))
    return [list(itertools.product(*cells)) for cells in per_row]


def slice_keys(queries: list[SliceQuery], features: dict, rows: int) -> types.VarLenTensorValue:
    """The batch's `slice_key_types`, as TFMA's SQL slicer sets it.

    Raises:
      _NotCovered: the batch holds values this module does not key as ZetaSQL does.
    """
    per_spec = [_spec_keys(query, features, rows) for query in queries]
    if all(isinstance(keys, np.ndarray) for keys in per_spec):  # every row: one key per spec, in spec order
        specs = len(per_spec)
        values = np.empty(rows * specs, dtype=object)
        for i, keys in enumerate(per_spec):
            values[i::specs] = keys
        indices = np.stack([np.repeat(np.arange(rows), specs), np.tile(np.arange(specs), rows)], axis=1)
        return types.VarLenTensorValue(values, indices, np.array([rows, specs]))
    keys: list[list[tuple]] = [[] for _ in range(rows)]
    for found in per_spec:
        for row, row_keys in enumerate([[key] for key in found] if isinstance(found, np.ndarray) else found):
            keys[row].extend(row_keys)
    return types.VarLenTensorValue.from_dense_rows([slicer_lib.slice_keys_to_numpy_array(k) for k in keys])


def _slice_columns_transformed(extract: dict, columns: set[str]) -> bool:
    transformed = extract.get(constants.TRANSFORMED_FEATURES_KEY)
    if not transformed:
        return False
    tables = transformed.values() if all(isinstance(t, dict) for t in transformed.values()) else [transformed]
    return any(columns & set(table) for table in tables if isinstance(table, dict))


class BatchSliceKeysFn(sql_slice_key_extractor.ExtractSqlSliceKeyFn):
    """TFMA's SQL slice-key DoFn, with the keys of `slicing.slice_sql`'s queries computed in NumPy."""

    def __init__(self, eval_config: tfma.EvalConfig, queries: list[SliceQuery]):
        super().__init__(eval_config)
        self._queries = queries
        self._columns = {column for query in queries for column in query.columns}
        self._by_zetasql = beam.metrics.Metrics.counter(constants.METRICS_NAMESPACE, "slice_key_batches_by_zetasql")
        self.batches_by_zetasql = 0  # this instance's batches handed to TFMA's DoFn

    def process(self, batched_extract: types.Extracts) -> list[types.Extracts]:
        features = batched_extract[constants.FEATURES_KEY]
        rows = _batch_rows(batched_extract)
        if rows is not None and not _slice_columns_transformed(batched_extract, self._columns):
            try:
                keys = slice_keys(self._queries, features, rows)
            except _NotCovered:
                pass
            else:
                result = copy.copy(batched_extract)
                result[constants.SLICE_KEY_TYPES_KEY] = keys
                return [result]
        self._by_zetasql.inc()
        self.batches_by_zetasql += 1
        return super().process(batched_extract)


def _batch_rows(extract: dict) -> Optional[int]:
    """The batch's rows (its serialized examples, else its labels), None when the extract does not say."""
    for key in (constants.INPUT_KEY, constants.LABELS_KEY):
        value = extract.get(key)
        if isinstance(value, dict):
            value = next(iter(value.values()), None)
        if isinstance(value, np.ndarray):
            return len(value)
    return None


def fast_slice_keys_stage(eval_config: tfma.EvalConfig) -> Optional[tfma.extractors.Extractor]:
    """The stage that replaces TFMA's SQL slice keys, named as TFMA's; None when a query is not `slice_sql`'s."""
    sqls = [spec.slice_keys_sql for spec in eval_config.slicing_specs if spec.slice_keys_sql]
    queries = [parse_slice_sql(sql) for sql in sqls]
    if not queries or any(query is None for query in queries):
        return None
    stage_name = sql_slice_key_extractor.SqlSliceKeyExtractor(eval_config).stage_name
    return tfma.extractors.Extractor(
        stage_name=stage_name,
        ptransform="ExtractSliceKeysInNumPy" >> beam.ParDo(BatchSliceKeysFn(eval_config, queries)),
    )
