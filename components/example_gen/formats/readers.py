"""Parquet, Avro and JSON Lines files as Arrow record batches, and as the text cells of ExampleGen's fast path.

Parquet is read by pyarrow (`pyarrow.parquet`), JSON Lines by pyarrow's JSON
reader (`.gz` decompressed), Avro by fastavro with the writer's schema mapped
to Arrow types (a union of `null` and one type is that type, nullable; a
union of two other types cannot be one column and is refused, naming the
field). Nested columns (lists, structs, maps; Avro arrays, records and maps)
are never read: `nested_columns` names them so that `validate` refuses a spec
that uses one, and the batches leave them out. With `flatten` (the spec's
`data.flatten`) a struct column (an Avro record) is read as one column per
leaf field, named `parent__child` (`flat_name`; nested structs repeat it:
`a__b__c`; `struct_columns`), a null struct making its leaves null.

`as_text` turns a batch into the string cells `fast_csv.write_batch` takes, so
these formats share CSV's split hash (of the cells' text: stable across runs
and machines), its tf.Example encoding and its columnar copy. The column
kinds come from the file's types (`kind_of`), not from the text: a Parquet
`double` column of whole numbers stays FLOAT.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from components.example_gen.fast_csv import ColumnKind
from components.example_gen.formats.jsonl_problems import jsonl_problem
from components.example_gen.formats.struct_columns import flat_name, flatten_batch, leaf_fields

__all__ = [
    "FormatError",
    "read_schema",
    "shared_schema",
    "nested_columns",
    "flat_name",
    "flatten_schema",
    "flatten_batch",
    "iter_batches",
    "kind_of",
    "as_text",
    "BATCH_ROWS",
]

BATCH_ROWS = 65_536


class FormatError(ValueError):
    """A file cannot be read as its format says; the message names the file and, where one is at fault, the column."""


# ---------------------------------------------------------------- schemas


def _is_nested(data_type: pa.DataType) -> bool:
    return pa.types.is_nested(data_type) or (
        pa.types.is_dictionary(data_type) and pa.types.is_nested(data_type.value_type)
    )


def nested_columns(schema: pa.Schema) -> list[str]:
    """The columns of `schema` holding lists, structs or maps (Avro arrays, records, maps)."""
    return [field.name for field in schema if _is_nested(field.type)]


def _refuse_clashes(names: list[str], path: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise FormatError(
                f"{path}: flattening its struct columns gives two columns named `{name}`. Expected every "
                "flattened name (`parent__child`) to differ from the other columns. Received a clash. Rename "
                "the column or the struct field, or set `data.flatten: false`."
            )
        seen.add(name)


def flatten_schema(schema: pa.Schema, path: str = "the data") -> pa.Schema:
    """`schema` with each struct column replaced by its leaf fields (`flat_name`), in place, in field order.

    Raises:
        FormatError: a flattened name equals another column's (`path` names the file).
    """
    fields = [leaf for field in schema for leaf in leaf_fields(field.name, field.type)]
    _refuse_clashes([field.name for field in fields], path)
    return pa.schema(fields)


_AVRO_PRIMITIVES = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}
_AVRO_LOGICAL = {
    "date": pa.date32(),
    "time-millis": pa.time32("ms"),
    "time-micros": pa.time64("us"),
    "timestamp-millis": pa.timestamp("ms", tz="UTC"),
    "timestamp-micros": pa.timestamp("us", tz="UTC"),
}
_AVRO_LIST = pa.list_(pa.null())  # stands for an array: named by nested_columns, never read
_AVRO_MAP = pa.map_(pa.string(), pa.null())  # stands for a map: named by nested_columns, never read
_AVRO_UNFINISHED = pa.struct([])  # a record that refers to itself: nested, never read


def _avro_record(path: str, field: str, avro: dict, named: dict[str, pa.DataType]) -> pa.DataType:
    """A record as a struct of its fields' types, registered under its name (and full name) for later references."""
    names = [avro.get("name"), ".".join(filter(None, (avro.get("namespace"), avro.get("name"))))]
    for name in filter(None, names):
        named.setdefault(name, _AVRO_UNFINISHED)
    children = []
    for child in avro.get("fields", []):
        try:
            child_type = _avro_type(path, flat_name(field, child["name"]), child["type"], named)
        except FormatError:  # a union of several types inside a record: unreadable, but only an error where used
            child_type = _AVRO_UNFINISHED
        children.append((child["name"], child_type))
    data_type = pa.struct(children)
    for name in filter(None, names):
        named[name] = data_type
    return data_type


def _avro_type(path: str, field: str, avro, named: dict[str, pa.DataType]) -> pa.DataType:
    """The Arrow type of one Avro field type (parsed by fastavro: a name, a dict, or a union list).

    `named` maps the record types defined so far to their Arrow structs (a later field may name one).
    """
    if isinstance(avro, list):
        kinds = [member for member in avro if member != "null"]
        if len(kinds) != 1:
            shown = ", ".join(str(m if isinstance(m, str) else m.get("type")) for m in avro)
            raise FormatError(
                f"{path}: Avro field `{field}` is a union of [{shown}]. Expected one type, or one type and "
                "`null` (a nullable column). Received a union of several types, which cannot be one column. "
                "Write the field with one type (e.g. a string, or two fields), or leave it out of the spec's "
                "features."
            )
        return _avro_type(path, field, kinds[0], named)
    if isinstance(avro, dict):
        logical = avro.get("logicalType")
        if logical in _AVRO_LOGICAL:
            return _AVRO_LOGICAL[logical]
        if logical == "decimal":
            return pa.decimal128(int(avro.get("precision", 38)), int(avro.get("scale", 0)))
        kind = avro.get("type")
        if kind in ("enum", "fixed"):
            data_type = pa.string() if kind == "enum" else pa.binary()
            named.setdefault(avro.get("name"), data_type)  # a later field may name it
            return data_type
        if kind == "array":
            return _AVRO_LIST
        if kind == "map":
            return _AVRO_MAP
        if kind == "record":
            return _avro_record(path, field, avro, named)
        return _avro_type(path, field, kind, named)
    if avro in _AVRO_PRIMITIVES:
        return _AVRO_PRIMITIVES[avro]
    return named.get(avro, _AVRO_UNFINISHED)  # a named type defined earlier in the schema


def _avro_schema(path: str) -> pa.Schema:
    import fastavro

    try:
        with open(path, "rb") as handle:
            writer_schema = fastavro.reader(handle).writer_schema
    except (ValueError, OSError, EOFError, StopIteration) as err:  # fastavro raises ValueError for a bad header
        raise FormatError(f"{path} is not a readable Avro file ({type(err).__name__}: {err}). {_FIX}") from None
    if not isinstance(writer_schema, dict) or writer_schema.get("type") != "record":
        raise FormatError(
            f"{path}: the Avro schema's top level is {writer_schema!r:.80}. Expected a record (one field per "
            "column). Write the file with a record schema."
        )
    named: dict[str, pa.DataType] = {}
    return pa.schema([(f["name"], _avro_type(path, f["name"], f["type"], named)) for f in writer_schema["fields"]])


_FIX = "Check the file (was it written completely?), or convert it again."


def _read_jsonl(path: str) -> pa.Table:
    import pyarrow.json as pa_json

    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                return pa_json.read_json(handle)
        return pa_json.read_json(path)
    except (pa.ArrowInvalid, OSError, EOFError) as err:
        raise FormatError(jsonl_problem(path, err)) from None


def read_schema(path: str, fmt: str, flatten: bool = False) -> pa.Schema:
    """The Arrow schema of one file of format `fmt` (Parquet: its footer; JSON Lines: read whole).

    Args:
        flatten: struct columns as their leaf fields (`flatten_schema`).

    Raises:
        FormatError: the file is not readable as `fmt`, (Avro) holds a union of several types, or (`flatten`)
            a flattened name clashes with another column.
    """
    schema = _file_schema(path, fmt)
    return flatten_schema(schema, path) if flatten else schema


def _file_schema(path: str, fmt: str) -> pa.Schema:
    if fmt == "avro":
        return _avro_schema(path)
    if fmt == "jsonl":
        return _read_jsonl(path).schema
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except (pa.ArrowException, OSError) as err:
        raise FormatError(f"{path} is not a readable Parquet file ({err}). {_FIX}") from None


def shared_schema(files: Sequence[str], fmt: str, flatten: bool = False) -> pa.Schema:
    """The schema of the first file, after checking every file has the same column names.

    Raises:
        FormatError: a file is unreadable, or its columns differ from the first file's.
    """
    first = read_schema(files[0], fmt, flatten)
    for path in files[1:]:
        names = read_schema(path, fmt, flatten).names
        if sorted(names) != sorted(first.names):
            raise FormatError(_columns_differ(files[0], first.names, path, names))
    return first


def _columns_differ(first_path: str, first: list[str], path: str, names: list[str]) -> str:
    """The message naming the columns one file lacks and the columns it adds, against the first file."""
    missing = [name for name in first if name not in names]
    extra = [name for name in names if name not in first]
    parts = []
    if missing:
        parts.append(f"missing {_names(missing)} (in {first_path}, not in {path})")
    if extra:
        parts.append(f"extra {_names(extra)} (in {path}, not in {first_path})")
    received = "; ".join(parts) or f"{names} against {first}"  # the same names, one of them repeated
    return (
        f"{path}: its columns differ from {first_path}'s. Expected every file of the data to have the same "
        f"columns. Received: {received}. Write every file with the same columns, or move the odd file out of "
        "the data's folder."
    )


def _names(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


# ---------------------------------------------------------------- batches


def _without_nested_leaves(data_type: pa.DataType) -> pa.DataType:
    """A struct type without its list, map and unreadable fields, so fastavro's dicts convert (they are never read)."""
    if not pa.types.is_struct(data_type):
        return data_type
    kept = [(f.name, _without_nested_leaves(f.type)) for f in data_type if _is_flat_or_struct(f.type)]
    return pa.struct(kept)


def _is_flat_or_struct(data_type: pa.DataType) -> bool:
    return not _is_nested(data_type) or (pa.types.is_struct(data_type) and data_type.num_fields > 0)


def _avro_batches(path: str, schema: pa.Schema, read: Sequence[str]) -> Iterator[pa.RecordBatch]:
    import fastavro

    flat = pa.schema([(name, _without_nested_leaves(schema.field(name).type)) for name in read])
    rows: list[dict] = []
    with open(path, "rb") as handle:
        for record in fastavro.reader(handle):
            rows.append(record)
            if len(rows) == BATCH_ROWS:
                yield pa.RecordBatch.from_pylist(rows, schema=flat)
                rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=flat)


def _columns_read(schema: pa.Schema, names: Sequence[str] | None, flatten: bool) -> tuple[list[str], list[str]]:
    """(the file's columns to read, the flat columns yielded in order) for `iter_batches`."""
    flat: list[str] = []
    read: list[str] = []
    wanted = None if names is None else set(names)
    for field in schema:
        leaves = leaf_fields(field.name, field.type) if flatten else [field]
        usable = [leaf.name for leaf in leaves if not _is_nested(leaf.type)]
        flat += usable
        if usable and (wanted is None or wanted.intersection(usable)):
            read.append(field.name)
    order = flat if names is None else [name for name in names if name in flat]
    return read, order


def iter_batches(
    path: str, fmt: str, names: Sequence[str] | None = None, flatten: bool = False
) -> Iterator[pa.RecordBatch]:
    """The rows of one file as record batches of its own types, nested columns left out.

    Args:
        names: the column order wanted (the first file's, `shared_schema`); default: the file's own.
        flatten: struct columns as their leaf columns (`flatten_batch`); `names` then name leaves.

    Raises:
        FormatError: the file is not readable as `fmt`.
    """
    schema = _file_schema(path, fmt)
    if flatten:
        flatten_schema(schema, path)  # refuses clashing names
    read, order = _columns_read(schema, names, flatten)
    try:
        if fmt == "avro":
            batches = _avro_batches(path, schema, read)
        elif fmt == "jsonl":
            batches = iter(_read_jsonl(path).select(read).to_batches(BATCH_ROWS))
        else:
            import pyarrow.parquet as pq

            batches = pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=read)
        for batch in batches:
            if batch.num_rows:
                if flatten:
                    batch = flatten_batch(batch)
                yield pa.RecordBatch.from_arrays([batch.column(name) for name in order], names=order)
    except (pa.ArrowException, OSError, ValueError, EOFError) as err:
        if isinstance(err, FormatError):
            raise
        raise FormatError(f"{path}: reading it as {fmt} failed ({type(err).__name__}: {err}). {_FIX}") from None


def kind_of(data_type: pa.DataType) -> int:
    """The tf.Example kind of a column of `data_type`: booleans and integers INT, decimals and floats FLOAT,
    no type (a JSON key always null) UNKNOWN, everything else (text, bytes, dates, times) STRING."""
    if pa.types.is_dictionary(data_type):
        data_type = data_type.value_type
    if pa.types.is_null(data_type):
        return ColumnKind.UNKNOWN
    if pa.types.is_boolean(data_type) or pa.types.is_integer(data_type):
        return ColumnKind.INT
    if pa.types.is_floating(data_type) or pa.types.is_decimal(data_type):
        return ColumnKind.FLOAT
    return ColumnKind.STRING


def _as_string(column: pa.Array, name: str) -> pa.Array:
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    data_type = column.type
    if pa.types.is_null(data_type):
        return pa.nulls(len(column), pa.string())
    if pa.types.is_boolean(data_type):
        return pc.cast(pc.cast(column, pa.int8()), pa.string())
    if pa.types.is_floating(data_type) or pa.types.is_decimal(data_type):
        return pc.cast(pc.cast(column, pa.float64()), pa.string())  # the shortest text that reads back exactly
    if pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        try:
            return pc.cast(column, pa.string())
        except pa.ArrowInvalid:
            raise FormatError(
                f"column `{name}` holds bytes that are not UTF-8 text. Expected text in a bytes column. "
                "Write it as a string column, or leave it out of the spec's features."
            ) from None
    return pc.cast(column, pa.string())


def as_text(batch: pa.RecordBatch, na_values: Sequence[str]) -> pa.RecordBatch:
    """`batch` as text cells, nulls kept, for `fast_csv.write_batch`.

    Numbers become the shortest text that reads back to the same value (a float NaN `nan`), booleans
    `0`/`1`, dates and times their ISO text; then cells whose text is in `na_values` become missing, as in
    a CSV file.
    """
    markers = pa.array(sorted(set(na_values)), pa.string())
    arrays = []
    for name, column in zip(batch.schema.names, batch.columns):
        text = _as_string(column, name)
        arrays.append(pc.if_else(pc.is_in(text, value_set=markers), pa.scalar(None, pa.string()), text))
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)
