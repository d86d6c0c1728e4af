"""The classes of a classification label, found in the data before anything runs.

The compiler needs them: the Evaluator's prediction key (`probability` for two
classes, `scores` for more) is fixed when the pipeline is built, and a binary
label's positive class must sit at index 1 of the class list Transform
stores. The values are read the way CSV ExampleGen types a column: a column
whose cells are all numbers names its classes by digits (`1.0` -> `1`), a text
column keeps its text. Empty cells are skipped (missing labels stop the
Transform, see `components/transform/labels.py`).
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Sequence

from components.common.csv_dialect import CsvDialect
from components.common.data_files import data_files
from components.example_gen.formats import FORMATS
from components.example_gen.image_files import ImageFolderError, list_image_folder
from components.transform.label_classes import LabelClassError, class_name, order_classes
from pipelines.profiling.format_profile import label_cells
from pipelines.spec.errors import SpecError, SpecProblem
from pipelines.spec.resolved import ResolvedSpec

__all__ = ["label_values", "label_classes"]

_MAX_CLASSES = 10_000


def _open_text(path: str):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _csv_cells(
    files: Sequence[str], column: str, missing: frozenset[str] = frozenset({""}), dialect: CsvDialect = CsvDialect()
) -> set[str]:
    cells: set[str] = set()
    for path in files:
        with _open_text(path) as handle:
            reader = map(dialect.cells, csv.reader(handle, delimiter=dialect.delimiter))
            header = next(reader, [])
            if column not in header:
                raise LabelClassError(
                    f"{path}: label column `{column}` is not in the header. Expected it in every file. "
                    f"Received: {header}. Fix `label.column` or the file."
                )
            index = header.index(column)
            cells.update(row[index] for row in reader if len(row) > index and row[index] not in missing)
    return cells


def _files_at(path: str) -> list[str]:
    return data_files(path) or [path]  # what validate and ExampleGen read


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _tfrecord_values(files: Sequence[str], column: str) -> set[str]:
    import tensorflow as tf

    names: set[str] = set()
    compression = "GZIP" if all(f.endswith(".gz") for f in files) else ""
    for record in tf.data.TFRecordDataset(list(files), compression_type=compression).as_numpy_iterator():
        feature = tf.train.Example.FromString(record).features.feature.get(column)
        if feature is None:
            continue
        kind = feature.WhichOneof("kind")
        values = getattr(feature, kind).value if kind else []
        names.update(v.decode("utf-8", "replace") if isinstance(v, bytes) else class_name(v) for v in values)
    return names


def _class_folders(path: str) -> set[str]:
    """An image folder's classes: the sub-folders that hold JPEG/PNG files (as ExampleGen reads them)."""

    try:
        return set(list_image_folder(path).classes)
    except ImageFolderError as error:
        raise LabelClassError(str(error)) from None


def label_values(resolved: ResolvedSpec) -> set[str]:
    """The distinct class names of `label.column` in the data files.

    Args:
      resolved: a checked spec with its data files listed.

    Returns:
      Class names (the label's string form).

    Raises:
      LabelClassError: the column is missing from a file, holds fractional numbers, or has
        more than 10,000 distinct values (not a class label).
    """
    column = resolved.spec.label.column
    files = resolved.data_files or _files_at(resolved.data_path)
    if resolved.data_format == "image_folder":
        names = _class_folders(resolved.data_path)
    elif resolved.data_format == "tfrecord":
        names = _tfrecord_values(files, column)
    elif resolved.data_format in FORMATS:
        try:
            cells, numeric = label_cells(
                files, resolved.data_format, column, ("", *resolved.spec.data.na_values), resolved.spec.data.flatten
            )
        except ValueError as err:
            raise LabelClassError(str(err)) from None
        names = {class_name(float(c)) for c in cells} if numeric else cells
    else:
        cells = _csv_cells(files, column, frozenset({"", *resolved.spec.data.na_values}), resolved.csv_dialect)
        names = {class_name(float(c)) for c in cells} if all(_is_number(c) for c in cells) else cells
    if len(names) > _MAX_CLASSES:
        raise LabelClassError(
            f"label column `{column}` has {len(names):,} distinct values. Expected at most {_MAX_CLASSES:,} classes "
            "for `task: classification`. Use `task: regression`, or a coarser label."
        )
    return names


def label_classes(resolved: ResolvedSpec) -> list[str] | None:
    """The label's class names in index order (None for regression).

    Args:
      resolved: a checked spec with its data files listed.

    Returns:
      `label.classes` in order when declared, else the classes in the data; an
      expression's classes are `0`, `1`. A binary label's positive class is last.

    Raises:
      SpecError: one problem on the `label` key to fix (see `order_classes` and `label_values`); the
        compiler raises it, so `run` reports it like any spec problem (exit 2).
    """
    label = resolved.spec.label
    if label.task != "classification":
        return None
    if label.expression is not None:
        return ["0", "1"]
    declared = list(label.classes) if label.classes is not None else None
    try:
        if resolved.data_format == "bigquery":  # not read at compile time: validate asked for `label.classes`
            return order_classes(None, declared, label.positive_class)
        found = label_values(resolved)
        return order_classes(found, declared, label.positive_class)
    except LabelClassError as error:
        raise SpecError([SpecProblem(f"label.{error.key}", str(error), None, resolved.spec_file)]) from None
