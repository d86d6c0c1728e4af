"""`data: {sql: ..., connection: ...}`: a query's rows, exported once per run to a Parquet file the run reads.

`connection` is a SQLAlchemy URL (`postgresql://user:pw@host/db`,
`sqlite:///path.db`) in which `${VAR}` is read from the environment, so the
spec holds no password; every message shows the URL with its password hidden
(`redacted`). `validate` (which every run starts with) runs the query through
SQLAlchemy and writes its rows to `<root>/data/query.parquet`
(`resolved.sql_export_path`), typed by the database's column types where the
driver says them (PostgreSQL's type codes), else by the values (SQLite). From
there on the data is a Parquet file: profiled, split and converted as one.
The file is replaced only when the rows changed, so an unchanged table keeps
the run up to date and TFX's cache valid. The rows are held in memory while
they are written. `connected` keeps one connection for several queries
(`sql_spans`: the list of spans, then each new span's rows).
"""

from __future__ import annotations

import contextlib
import decimal
import os
import re
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


def _column(name: str, values: list, data_type: pa.DataType | None) -> pa.Array:
    if data_type is not None and pa.types.is_floating(data_type):
        values = [float(v) if isinstance(v, decimal.Decimal) else v for v in values]
    try:
        return pa.array(values, type=data_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        kinds = sorted({type(v).__name__ for v in values if v is not None})
        raise SqlProblem(
            f"column `{name}` of the query's result holds values of several types ({', '.join(kinds)}). "
            f"Expected one type per column. CAST it in the query, e.g. `CAST({name} AS TEXT)`.",
            "data.sql",
        ) from None


def _rows_to_table(names: list[str], types: list, rows: list[tuple]) -> pa.Table:
    columns = list(zip(*rows)) if rows else [() for _ in names]
    return pa.table({name: _column(name, list(values), t) for name, values, t in zip(names, columns, types)})


def _write_if_changed(table: pa.Table, path: str) -> None:
    """Writes `table` to `path` (complete or not at all); an unchanged file keeps its time, so caches hold.

    The rows go to a hidden file of this process first (two `validate`s at once each write their own; a
    killed one leaves a hidden name, which no data listing reads), then replace `path` in one step.
    """
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    partial = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    pq.write_table(table, partial)
    with open(partial, "rb") as new:
        fresh = new.read()
    try:
        with open(path, "rb") as old:
            same = old.read() == fresh
    except OSError:
        same = False
    if same:
        os.remove(partial)
    else:
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
            SqlProblem: the query fails, returns no rows, or a column holds several types.
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
            failing query, a query without rows or columns, or a column holding several types.
    """
    with connected(connection, environ) as database:
        return database.export(sql, path)
