"""`data: {sql: ..., connection: ...}`: a query's rows, exported once per run to a Parquet file the run reads.

`connection` is a SQLAlchemy URL (`postgresql://user:pw@host/db`,
`sqlite:///path.db`) in which `${VAR}` is read from the environment, so the
spec holds no password; every message shows the URL with its password hidden
(`redacted`). `validate` (which every run starts with) runs the query through
SQLAlchemy and writes its rows to `<root>/data/query.parquet`
(`resolved.sql_export_path`), typed by the database's column types where the
driver says them (PostgreSQL's type codes), else by the values (SQLite). From
there on the data is a Parquet file: profiled, split and converted as one.
The file is replaced only when the rows changed (the same rows in another
order keep it), so an unchanged table keeps the run up to date and TFX's
cache valid. A UUID is its text; an interval is refused (its unit is the
user's to choose). The rows are held in memory while they are written.
`connected` keeps one connection for several queries (`sql_spans`: the list
of spans, then each new span's rows).
"""

from __future__ import annotations

import collections
import contextlib
import decimal
import os
import re
import uuid
from collections.abc import Iterator, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["Database", "SqlProblem", "connected", "expand_connection", "redacted", "export_query"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FETCH_ROWS = 50_000
# PostgreSQL type codes (pg_type OIDs, what psycopg2 reports per column) -> Arrow types.
_POSTGRES_TYPES = {
    16: pa.bool_(),
    20: pa.int64(),
    21: pa.int16(),
    23: pa.int32(),
    26: pa.int64(),
    700: pa.float32(),
    701: pa.float64(),
    1700: pa.float64(),  # numeric: its Decimal values as float
    18: pa.string(),
    19: pa.string(),
    25: pa.string(),
    1042: pa.string(),
    1043: pa.string(),
    17: pa.binary(),
    1082: pa.date32(),
    1114: pa.timestamp("us"),
    1184: pa.timestamp("us", tz="UTC"),
    2950: pa.string(),  # uuid: its canonical text (`_plain_values`)
    1186: pa.duration("us"),  # interval: refused (`_refuse_durations`), even when every value is NULL
}


class SqlProblem(ValueError):
    """The query cannot be exported; `key` is the spec key to fix (`data.connection` or `data.sql`)."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


def expand_connection(template: str, environ: Mapping[str, str] = os.environ) -> str:
    """`template` with each `${VAR}` replaced by the environment's value.

    Raises:
        SqlProblem: a variable is not set (named, with the command that sets it).
    """
    unset = [name for name in _VARIABLE.findall(template) if name not in environ]
    if unset:
        raise SqlProblem(
            f"environment variable `{unset[0]}` is not set. Expected it to hold the database's SQLAlchemy URL "
            f"(or the part of it that `${{{unset[0]}}}` stands for). Set it before the run, e.g. "
            f"`export {unset[0]}=postgresql://user:password@host:5432/dbname`.",
            "data.connection",
        )
    return _VARIABLE.sub(lambda match: environ[match.group(1)], template)


def redacted(url: str) -> str:
    """`url` with its password shown as `***` (the whole URL hidden when it does not parse)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return "<the connection URL>"


def _scrubbed(text: str, url: str) -> str:
    """An error's text without the URL's password, wherever a driver echoed it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        password = make_url(url).password
    except (ArgumentError, ValueError):
        password = None
    text = str(text).strip().splitlines()[0] if str(text).strip() else type(text).__name__
    return text.replace(password, "***") if password else text


def _column_type(dialect: str, type_code) -> pa.DataType | None:
    if dialect == "postgresql" and isinstance(type_code, int):
        return _POSTGRES_TYPES.get(type_code)
    return None  # SQLite and unknown codes: the values decide


def _plain_values(values: list, data_type: pa.DataType | None) -> list:
    """`values` as Arrow takes them: numeric's Decimals as floats, UUIDs as their canonical text."""
    if data_type is not None and pa.types.is_floating(data_type):
        values = [float(v) if isinstance(v, decimal.Decimal) else v for v in values]
    return [str(v) if isinstance(v, uuid.UUID) else v for v in values]


def _refuse_durations(name: str, column: pa.Array) -> None:
    """Raises on a duration column (PostgreSQL's interval): no component reads one, so it is refused here.

    Not converted to seconds: the unit is the user's to choose and the column's name should say it, and
    psycopg2's timedelta counts a year as 365 days where PostgreSQL's own `EXTRACT(EPOCH ...)` counts 365.25.
    """
    if pa.types.is_duration(column.type):
        raise SqlProblem(
            f"column `{name}` of the query's result holds durations (an interval). Expected numbers, text, "
            f"booleans, dates or timestamps: a duration is no feature type. Received: {column.type}. Turn it into "
            f"a number in the unit you mean in the query, e.g. `EXTRACT(EPOCH FROM {name}) AS {name}_seconds` "
            "(PostgreSQL).",
            "data.sql",
        )


def _column(name: str, values: list, data_type: pa.DataType | None) -> pa.Array:
    values = _plain_values(values, data_type)
    try:
        column = pa.array(values, type=data_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        kinds = sorted({type(v).__name__ for v in values if v is not None})
        raise SqlProblem(
            f"column `{name}` of the query's result holds values of several types ({', '.join(kinds)}). "
            f"Expected one type per column. CAST it in the query, e.g. `CAST({name} AS TEXT)`.",
            "data.sql",
        ) from None
    _refuse_durations(name, column)
    return column


def _refuse_repeated_names(names: list[str]) -> None:
    """Raises when two result columns share a name (a join's `*`): the file keeps one column per name."""
    repeated = [name for name, count in collections.Counter(names).items() if count > 1]
    if repeated:
        shown = ", ".join(f"`{name}`" for name in repeated)
        raise SqlProblem(
            f"the query's result has several columns named {shown} (a join's `*` repeats a column, or an alias "
            "reuses a name). Expected one name per column: the exported file keeps columns by name, so one "
            f"would silently replace the other. Received: columns {', '.join(names)}. Give each its own name "
            f"with AS in `data.sql`, e.g. `... AS {repeated[0]}_2`, or select the columns by name instead of `*`.",
            "data.sql",
        )


def _rows_to_table(names: list[str], types: list, rows: list[tuple]) -> pa.Table:
    _refuse_repeated_names(names)
    columns = list(zip(*rows)) if rows else [() for _ in names]
    return pa.table({name: _column(name, list(values), t) for name, values, t in zip(names, columns, types)})


def _fingerprint(table: pa.Table) -> int:
    """An order-free digest of `table`'s rows: the sum (mod 2**64) of pandas' 64-bit hash of each row.

    A row's hash covers its values and which of them are NULL (a float NULL is NaN in pandas, as NaN is).
    Integers with NULLs, dates and timestamps go through Python objects: none is rounded or out of range.
    """
    import numpy as np
    import pandas as pd

    values = table.to_pandas(integer_object_nulls=True, date_as_object=True, timestamp_as_object=True)
    nulls = pd.DataFrame({i: column.is_null().to_numpy() for i, column in enumerate(table.columns)})
    rows = pd.concat([values, nulls], axis=1, ignore_index=True)
    return int(pd.util.hash_pandas_object(rows, index=False).to_numpy().sum(dtype=np.uint64))


def _holds_same_rows(table: pa.Table, path: str) -> bool:
    """Whether the Parquet file at `path` holds `table`'s columns and rows, in any order (False without one)."""
    try:
        schema, count = pq.read_schema(path), pq.read_metadata(path).num_rows
        if count != table.num_rows or not schema.equals(table.schema, check_metadata=False):
            return False
        existing = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return False
    return _fingerprint(existing) == _fingerprint(table)


def _write_if_changed(table: pa.Table, path: str) -> None:
    """Writes `table` to `path` (complete or not at all), unless the file there already holds its rows.

    The rows compare in any order (`_holds_same_rows`): after a `CLUSTER` or `VACUUM FULL` a query without
    ORDER BY returns an unchanged table's rows in another order, and the file, its bytes and its time stay,
    so the run stays up to date and TFX's cache valid. New rows go to a hidden file of this process first
    (two `validate`s at once each write their own; a killed one leaves a hidden name, which no data listing
    reads), then replace `path` in one step.
    """
    if _holds_same_rows(table, path):
        return
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    partial = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    pq.write_table(table, partial)
    os.replace(partial, path)


class Database:
    """An open connection to `data.connection`'s database: queries whose errors are SqlProblems without the password."""

    def __init__(self, connection, url: str, dialect: str):
        self._connection = connection
        self._url = url
        self.dialect = dialect
        self.shown = redacted(url)

    def rows(self, sql: str, key: str = "data.sql") -> tuple[list[str], list, list[tuple]]:
        """(column names, Arrow types where the driver says them, rows) of `sql`; `key` names the spec key to fix.

        Raises:
            SqlProblem: the query fails or returns no result set (not a SELECT).
        """
        import sqlalchemy
        from sqlalchemy import exc

        try:
            result = self._connection.execute(sqlalchemy.text(sql))
            if not result.returns_rows:
                raise SqlProblem(f"the query returns no rows (is it a SELECT?). Write a SELECT in `{key}`.", key)
            names = list(result.keys())
            types = [_column_type(self.dialect, d[1]) for d in result.cursor.description]
            rows: list[tuple] = []
            for chunk in iter(lambda: result.fetchmany(_FETCH_ROWS), []):
                rows.extend(tuple(row) for row in chunk)
        except exc.DBAPIError as err:
            raise SqlProblem(
                f"the query failed on `{self.shown}`: {_scrubbed(err.orig, self._url)}. Fix `{key}`.", key
            ) from None
        return names, types, rows

    def export(self, sql: str, path: str, what: str = "the query") -> int:
        """Writes the rows of `sql` to `path` (Parquet, complete or not at all); returns their number.

        Raises:
            SqlProblem: the query fails or returns no rows, two columns share a name, or a column holds several
                types or durations.
        """
        names, types, rows = self.rows(sql)
        if not rows:
            raise SqlProblem(
                f"{what} returned no rows on `{self.shown}`. Expected the data's rows. Fix `data.sql`.", "data.sql"
            )
        _write_if_changed(_rows_to_table(names, types, rows), path)
        return len(rows)


@contextlib.contextmanager
def connected(connection: str, environ: Mapping[str, str] = os.environ) -> Iterator[Database]:
    """The database at `connection` (`${VAR}` expanded), connected for the block and closed after it.

    Raises:
        SqlProblem: an unset variable, a URL SQLAlchemy cannot use, or a database refusing the connection.
    """
    import sqlalchemy
    from sqlalchemy import exc

    url = expand_connection(connection, environ)
    shown = redacted(url)
    try:
        engine = sqlalchemy.create_engine(url)
    except (exc.ArgumentError, exc.NoSuchModuleError, ValueError, ImportError) as err:
        raise SqlProblem(
            f"`{shown}` is not a SQLAlchemy URL this installation can use ({_scrubbed(err, url)}). Expected "
            "`dialect+driver://user:password@host:port/database`, e.g. `postgresql://...` or `sqlite:///file.db`. "
            "Fix the URL (or the environment variable holding it).",
            "data.connection",
        ) from None
    try:
        try:
            connection_ = engine.connect()
        except exc.DBAPIError as err:
            raise SqlProblem(
                f"the database at `{shown}` refused the connection: {_scrubbed(err.orig, url)}. Expected a running "
                "database that accepts this user. Check that the server is up and the host, port, user, password "
                "and database in the URL.",
                "data.connection",
            ) from None
        with connection_:
            yield Database(connection_, url, engine.dialect.name)
    finally:
        engine.dispose()


def export_query(sql: str, connection: str, path: str, environ: Mapping[str, str] = os.environ) -> int:
    """Runs `sql` on the database at `connection` (`${VAR}` expanded) and writes its rows to `path` (Parquet).

    Returns:
        The number of rows.

    Raises:
        SqlProblem: an unset variable, a URL SQLAlchemy cannot use, a database refusing the connection, a
            failing query, a query without rows or columns, two columns of one name, or a column holding several
            types or durations.
    """
    with connected(connection, environ) as database:
        return database.export(sql, path)
