"""The work of RowFilter: evaluate an expression per tf.Example and keep the rows where it holds.

The expression language is the label's (`components.transform.expressions`):
column names, numbers, `+ - * /`, comparisons, `and`/`or`/`not`. A row
missing a column the expression reads, or holding text in it, counts as
failing (dropped) unless `keep_missing` is set.
"""

from __future__ import annotations

import glob
import math
import operator
import os
from collections.abc import Callable, Iterable

from components.transform import expressions

__all__ = ["row_predicate", "filter_split", "drop_missing_split", "has_value", "MissingValue"]

OUTPUT_FILE = "data_tfrecord-00000-of-00001.gz"


class MissingValue(LookupError):
    """The row has no numeric value for a column the expression reads."""


def _divide(a: float, b: float) -> float:
    return a / b if b else math.nan


_OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": _divide,
    "neg": operator.neg,
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
    "eq": operator.eq,
    "ne": operator.ne,
    "and": lambda a, b: bool(a) and bool(b),
    "or": lambda a, b: bool(a) or bool(b),
    "not": operator.not_,
    "cast": float,
}


class _Row:
    """A tf.Example's features as numbers, read on demand."""

    def __init__(self, example):
        self.features = example.features.feature

    def __getitem__(self, name: str) -> float:
        feature = self.features.get(name)
        kind = feature.WhichOneof("kind") if feature is not None else None
        values = getattr(feature, kind).value if kind in ("float_list", "int64_list") else ()
        if not values:
            raise MissingValue(name)
        return float(values[0])


def row_predicate(expression: str, keep_missing: bool = False) -> Callable[[object], bool]:
    """A function `tf.train.Example -> keep?`.

    Raises:
        ExpressionError: the expression is outside the accepted language.
    """
    expressions.parse(expression)

    def keep(example) -> bool:
        try:
            return bool(expressions.evaluate(expression, _Row(example), _OPS))
        except MissingValue:
            return keep_missing

    return keep


def _records(split_dir: str) -> Iterable[bytes]:
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(split_dir, "*")))
    if not files:
        return
    compression = "GZIP" if files[0].endswith(".gz") else ""
    for record in tf.data.TFRecordDataset(files, compression_type=compression):
        yield record.numpy()


def filter_split(input_dir: str, output_dir: str, expression: str, keep_missing: bool = False) -> tuple[int, int]:
    """Copies the rows of one split that pass; returns (kept, dropped).

    Raises:
        ValueError: a column the expression reads is in no row of the split.
    """
    import tensorflow as tf

    keep = row_predicate(expression, keep_missing)
    wanted = set(expressions.column_names(expression))
    seen: set[str] = set()
    kept = dropped = 0
    os.makedirs(output_dir, exist_ok=True)
    with tf.io.TFRecordWriter(os.path.join(output_dir, OUTPUT_FILE), options="GZIP") as writer:
        for record in _records(input_dir):
            example = tf.train.Example.FromString(record)
            seen.update(wanted & set(example.features.feature))
            if keep(example):
                writer.write(record)
                kept += 1
            else:
                dropped += 1
    never = sorted(wanted - seen)
    if never and kept + dropped:
        raise ValueError(
            f"column(s) {', '.join(f'`{c}`' for c in never)} in `expression` appear in no row of "
            f"{input_dir}. Expected column names of the examples. Received: `{expression}`. Fix the expression."
        )
    return kept, dropped


def has_value(example, column: str) -> bool:
    """Whether the tf.Example holds at least one value in `column` (ExampleGen leaves a missing cell out)."""
    feature = example.features.feature.get(column)
    kind = feature.WhichOneof("kind") if feature is not None else None
    return bool(kind and getattr(feature, kind).value)


def drop_missing_split(input_dir: str, output_dir: str, column: str) -> tuple[int, int]:
    """Copies the rows of one split that hold a value in `column`; returns (kept, dropped)."""
    import tensorflow as tf

    kept = dropped = 0
    os.makedirs(output_dir, exist_ok=True)
    with tf.io.TFRecordWriter(os.path.join(output_dir, OUTPUT_FILE), options="GZIP") as writer:
        for record in _records(input_dir):
            if has_value(tf.train.Example.FromString(record), column):
                writer.write(record)
                kept += 1
            else:
                dropped += 1
    return kept, dropped
