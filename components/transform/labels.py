"""The label tensor Transform outputs, and the class list it stores with the graph.

Classification: the label is the int64 index of its class in
`TransformConfig.class_names` (binary: index 1 is the positive class), and
those names are written into the transform graph as the vocabulary file
`label_classes` (`TFTransformOutput.vocabulary_by_name`), which the Trainer
reads for the model's head and the export for class names (the exported
model carries it as `assets/label_classes`).

A label `column` is compared by its string form (integers as digits). A value
that is not a class, or a missing cell, stops the transform with an error
naming the values (the compiler already checked the data's classes, so this
only happens when the data changed or has missing labels): a label is never
guessed. A label `expression` gives 1 where it holds and 0 elsewhere,
including rows where one of its columns is missing.

Regression: a float32 label, 0 where missing, as before.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

import tensorflow as tf
import tensorflow_transform.beam as tft_beam

from components.transform import expressions
from components.transform.config import TransformConfig

__all__ = ["LABEL_CLASSES", "label_tensor", "string_form"]

LABEL_CLASSES = "label_classes"

_EXPRESSION_OPS = {
    "add": tf.add,
    "sub": tf.subtract,
    "mul": tf.multiply,
    "div": tf.math.divide_no_nan,
    "neg": tf.negative,
    "gt": tf.greater,
    "ge": tf.greater_equal,
    "lt": tf.less,
    "le": tf.less_equal,
    "eq": tf.equal,
    "ne": tf.not_equal,
    "and": tf.logical_and,
    "or": tf.logical_or,
    "not": tf.logical_not,
    "cast": lambda value: tf.cast(value, tf.float32),
}


def _dense(value: tf.Tensor | tf.SparseTensor, default) -> tf.Tensor:
    """A [batch] column with `default` (`""` or 0 when None) in missing cells."""
    if default is None:
        default = "" if value.dtype == tf.string else 0
    if isinstance(value, tf.SparseTensor):
        fill = tf.constant(str(default)) if value.dtype == tf.string else tf.cast(default, value.dtype)
        shape = [value.dense_shape[0], 1]
        value = tf.sparse.to_dense(tf.SparseTensor(value.indices, value.values, shape), default_value=fill)
    return tf.reshape(value, [-1])


def _present(value: tf.Tensor | tf.SparseTensor) -> tf.Tensor:
    """[batch] booleans: True where the column has a value."""
    if isinstance(value, tf.SparseTensor):
        ones = tf.SparseTensor(value.indices, tf.ones_like(value.values, tf.int8), [value.dense_shape[0], 1])
        return tf.reshape(tf.sparse.to_dense(ones), [-1]) > 0
    return tf.ones_like(tf.reshape(value, [-1]), tf.bool)


def _numeric(value: tf.Tensor) -> tf.Tensor:
    if value.dtype == tf.string:
        # A column with no values at all is inferred as text by SchemaGen.
        return tf.strings.to_number(tf.where(value == "", "0", value), tf.float32)
    return tf.cast(value, tf.float32)


def string_form(value: tf.Tensor) -> tf.Tensor:
    """A dense label column as class names: text as is, numbers as integer digits.

    A number with a fractional part keeps it (`2.5`), so it matches no class.
    """
    if value.dtype == tf.string:
        return value
    if value.dtype.is_integer:
        return tf.strings.as_string(value)
    as_int = tf.cast(value, tf.int64)
    integral = tf.equal(tf.cast(as_int, value.dtype), value)
    return tf.where(integral, tf.strings.as_string(as_int), tf.strings.as_string(value))


def _expression_value(config: TransformConfig, inputs: dict) -> tf.Tensor:
    names = expressions.column_names(config.label_expression)
    text = set(expressions.text_columns(config.label_expression))
    columns = {
        n: string_form(_dense(inputs[n], None)) if n in text else _numeric(_dense(inputs[n], None)) for n in names
    }
    value = expressions.evaluate(config.label_expression, columns, _EXPRESSION_OPS)
    if value.dtype == tf.bool:
        value = tf.cast(value, tf.float32)
    present = tf.reduce_all(tf.stack([_present(inputs[n]) for n in names]), axis=0)
    return tf.where(present, value, tf.zeros_like(value))


def _write_classes(names: list[str]) -> None:
    """Stores `names`, one a line in index order, as the transform graph's `label_classes` asset.

    The classes are known before Transform runs (the compiler reads them from
    the spec or the data), so no analyzer is needed: the file is written to the
    Beam temporary folder and registered as an asset file of the graph, which
    tf.Transform's TF1 and TF2 savers copy into `transform_fn/assets/`, where
    `TFTransformOutput.vocabulary_by_name` and the exported model find it. A
    `tft.vocabulary` analyzer would cost the taxi Transform seconds.
    """
    content = "".join(f"{name}\n" for name in names)
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]
    try:
        base = tft_beam.Context.create_base_temp_dir()
    except ValueError:  # traced outside a Beam context (TFX lists the input columns that way)
        base = tempfile.gettempdir()
    directory = os.path.join(base, f"label_classes_{digest}")
    path = os.path.join(directory, LABEL_CLASSES)
    if not tf.io.gfile.exists(path):
        tf.io.gfile.makedirs(directory)
        with tf.io.gfile.GFile(path, "w") as handle:
            handle.write(content)
    with tf.init_scope():  # an eager constant: TF2 mode wraps each collected path in a `tf.saved_model.Asset`
        asset = tf.constant(path)
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.ASSET_FILEPATHS, asset)


def _class_index(config: TransformConfig, inputs: dict) -> tf.Tensor:
    names = config.class_names
    column = config.label_column
    text = string_form(_dense(inputs[column], None))
    present = _present(inputs[column])
    matches = tf.equal(tf.reshape(text, [-1, 1]), tf.constant(names)[tf.newaxis, :])
    known = tf.logical_and(tf.reduce_any(matches, axis=1), present)
    index = tf.argmax(tf.cast(matches, tf.int32), axis=1, output_type=tf.int64)
    check = tf.debugging.Assert(
        tf.reduce_all(known),
        [
            f"label column `{column}` holds values that are not classes. Expected one of {names}. Received "
            "(empty: a missing label):",
            tf.boolean_mask(tf.where(present, text, ""), tf.logical_not(known)),
            "Fix: add them to `label.classes`, or remove those rows (and rows without a label) from the data.",
        ],
        summarize=5,
        name="label_is_a_class",
    )
    _write_classes(names)
    with tf.control_dependencies([check]):
        return tf.identity(tf.where(known, index, -tf.ones_like(index)))


def label_tensor(config: TransformConfig, inputs: dict) -> tf.Tensor:
    """The label Transform outputs under `config.label_name`.

    Args:
      config: the label's column or expression, task and classes.
      inputs: the raw columns (dense or sparse tensors).

    Returns:
      Classification: [batch] int64 class indices. Regression: [batch] float32.

    Raises:
      ExpressionError: the label expression is outside the accepted subset.
    """
    if config.task != "classification":
        if config.label_column is None:
            return _expression_value(config, inputs)
        column = inputs[config.label_column]
        value = _numeric(_dense(column, None))
        return tf.where(_present(column), value, tf.zeros_like(value))
    if config.label_column is None:
        value = _expression_value(config, inputs)
        index = tf.cast(value, tf.int64)
        _write_classes(config.class_names)
        return index
    return _class_index(config, inputs)
