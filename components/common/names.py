"""Column name -> tensor name: any header text is a usable column name.

A CSV header may say `mean radius`, `price.usd`, `température` or `2nd_try`.
tf.Example keys and SignatureDef input keys may be any string, but TensorFlow
op names, Keras layer names and `tf.function` argument names may not. Every
place that names a tensor after a column (the transformed feature
`<name>_xf`, the Keras `Input`, the export's raw-input `TensorSpec`, a
vocabulary file) calls `tensor_name`, so the mapping is the same everywhere.

A name that is already a Python identifier of ASCII letters, digits and `_`,
starting with a letter, is kept as is (the taxi columns, and every spec
written before this module). Any other name is spelled with `_` for each
unusable character and gets a short hash of the original, so two columns can
never collide (`a b` and `a_b` differ).

Example:
    >>> tensor_name("fare")
    'fare'
    >>> tensor_name("mean radius")
    'mean_radius_4ad3a3'
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["tensor_name", "tensor_names"]

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_UNUSABLE = re.compile(r"[^A-Za-z0-9_]")


def tensor_name(column: str) -> str:
    """A TensorFlow- and Keras-safe name for `column`, deterministic and collision-free.

    Args:
        column: the column name as the data's header spells it.

    Returns:
        `column` itself when it is plain (`[A-Za-z][A-Za-z0-9_]*`), else a plain
        spelling of it followed by `_` and 6 hex digits of its SHA-1.

    Raises:
        ValueError: `column` is empty.
    """
    if not column:
        raise ValueError("a column name is empty. Expected a name for every column. Name it in the header line.")
    if _PLAIN.fullmatch(column):
        return column
    spelled = _UNUSABLE.sub("_", column)
    if not spelled[0].isalpha():
        spelled = f"c{spelled}" if spelled[0] == "_" else f"c_{spelled}"
    digest = hashlib.sha1(column.encode("utf-8")).hexdigest()[:6]
    return f"{spelled}_{digest}"


def tensor_names(columns) -> dict[str, str]:
    """`{tensor_name(c): c}` for `columns`: the way back from tensor names to column names.

    Args:
        columns: column names.

    Returns:
        A dict from tensor name to column name.
    """
    return {tensor_name(column): column for column in columns}
