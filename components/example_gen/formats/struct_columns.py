"""Struct columns as one column per leaf field (`data.flatten`): `parent__child`, `a__b__c` for nested structs.

pyarrow's `Table.flatten` does one level and names the fields `parent.child`;
here every level is flattened and the separator is `__`: label and
derived-feature expressions name columns as Python identifiers, where `a.b`
would be an attribute. A struct without fields (an Avro record that refers
to itself, or holds an unreadable union) stays one nested column.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["FLAT_SEPARATOR", "flat_name", "leaf_fields", "flatten_batch"]

FLAT_SEPARATOR = "__"


def flat_name(parent: str, child: str) -> str:
    """The column a struct's field becomes with `data.flatten`: `parent__child`."""
    return f"{parent}{FLAT_SEPARATOR}{child}"


def _is_struct(data_type: pa.DataType) -> bool:
    return pa.types.is_struct(data_type) and data_type.num_fields > 0


def leaf_fields(name: str, data_type: pa.DataType) -> list[pa.Field]:
    """The columns a column `name` of `data_type` becomes: itself, or a struct's leaf fields (`flat_name`)."""
    if not _is_struct(data_type):
        return [pa.field(name, data_type)]
    return [leaf for child in data_type for leaf in leaf_fields(flat_name(name, child.name), child.type)]


def _leaf_arrays(name: str, column: pa.Array) -> list[tuple[str, pa.Array]]:
    if not _is_struct(column.type):
        return [(name, column)]
    children = column.flatten()  # each child with the parent's nulls applied
    return [
        leaf for field, child in zip(column.type, children) for leaf in _leaf_arrays(flat_name(name, field.name), child)
    ]


def flatten_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` with each struct column replaced by its leaf columns, named as `leaf_fields` names them."""
    leaves = [leaf for name, column in zip(batch.schema.names, batch.columns) for leaf in _leaf_arrays(name, column)]
    return pa.RecordBatch.from_arrays([array for _, array in leaves], names=[name for name, _ in leaves])
