"""`data: {sql, connection}` against a real PostgreSQL server (started here) and SQLite.

The query's rows are exported once per validate/run to `<root>/data/query.parquet`,
typed by the database's column types (a uuid as text), NULLs missing; the same
rows in another order keep the file; `${VAR}` comes from the environment; no
password reaches a message or a file; bad input (a repeated column name, an
interval) is one problem on `data.connection` or `data.sql`.
"""

from __future__ import annotations

import datetime
import os
import sqlite3
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ports import free_port
from postgres_server import PASSWORD, postgres_engine

from pipelines.load import load_spec
from pipelines.spec.sql_source import SqlProblem, expand_connection, export_query, redacted

COMPANIES = ["Flash Cab", "Blue Ribbon", None]


def _rows(count: int = 30) -> list[tuple]:
    return [
        (
            i,
            round(5 + i * 0.75, 2),
            (i % 4) * 0.9,
            None if i % 7 == 3 else 0.5 + i * 0.3,
            COMPANIES[i % 3],
            i % 2 == 0,
            datetime.date(2024, 1, 1 + i % 28),
        )
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def postgres():
    with postgres_engine() as (url, engine):
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "CREATE TABLE trips (id integer, fare numeric(6, 2), tips real, trip_miles double precision, "
                "company text, paid_card boolean, day date, never bigint)"
            )
            for row in _rows():
                connection.exec_driver_sql("INSERT INTO trips VALUES (%s, %s, %s, %s, %s, %s, %s, NULL)", row)
        yield url


def _sql_spec(make_spec, sql: str = "SELECT * FROM trips ORDER BY id", connection: str = "${DB_URL}"):
    return make_spec({"data": {"sql": sql, "connection": connection}})


def test_a_postgres_table_is_exported_with_its_column_types_and_nulls(postgres, tmp_path):
    path = str(tmp_path / "query.parquet")
    assert export_query("SELECT * FROM trips ORDER BY id", "${DB_URL}", path, {"DB_URL": postgres}) == 30
    table = pq.read_table(path)
    assert dict(zip(table.schema.names, table.schema.types)) == {
        "id": pa.int32(),
        "fare": pa.float64(),  # numeric(6, 2)
        "tips": pa.float32(),
        "trip_miles": pa.float64(),
        "company": pa.string(),
        "paid_card": pa.bool_(),
        "day": pa.date32(),
        "never": pa.int64(),  # every value NULL: still the column's type
    }
    assert table.column("trip_miles").null_count == sum(row[3] is None for row in _rows()) == 4
    assert table.column("company").null_count == sum(row[4] is None for row in _rows()) == 10
    assert table.column("fare").to_pylist()[:2] == [5.0, 5.75]


def test_a_spec_on_a_query_validates_and_reads_the_export(postgres, tmp_path, make_spec, monkeypatch):
    monkeypatch.setenv("DB_URL", postgres)
    resolved = load_spec(str(_sql_spec(make_spec)), cwd=str(tmp_path))
    export = tmp_path / "runs" / "taxi_small" / "data" / "query.parquet"
    assert resolved.data_path == str(export) and resolved.data_format == "parquet"
    assert resolved.data_files == (str(export),)
    assert {"fare", "trip_miles", "tips"} <= resolved.numeric_columns and "company" not in resolved.numeric_columns


def test_an_unchanged_table_keeps_the_export_and_a_changed_one_replaces_it(postgres, tmp_path, make_spec, monkeypatch):
    import sqlalchemy

    monkeypatch.setenv("DB_URL", postgres)
    spec = _sql_spec(make_spec, "SELECT * FROM trips WHERE id < 1000 ORDER BY id")
    export = tmp_path / "runs" / "taxi_small" / "data" / "query.parquet"
    load_spec(str(spec), cwd=str(tmp_path))
    first = export.stat().st_mtime_ns
    load_spec(str(spec), cwd=str(tmp_path))
    assert export.stat().st_mtime_ns == first  # the run stays up to date, TFX's cache valid
    engine = sqlalchemy.create_engine(postgres)
    with engine.begin() as connection:
        connection.exec_driver_sql("INSERT INTO trips VALUES (1000, 9.5, 1, 2, 'Flash Cab', true, '2024-02-01', 1)")
    try:
        load_spec(str(_sql_spec(make_spec, "SELECT * FROM trips WHERE id <= 1000 ORDER BY id")), cwd=str(tmp_path))
        assert pq.read_metadata(export).num_rows == 31
    finally:
        with engine.begin() as connection:
            connection.exec_driver_sql("DELETE FROM trips WHERE id = 1000")
        engine.dispose()


@pytest.fixture
def scores(postgres):
    """A table `scores` of 5 rows inserted out of id order (row 3 all NULLs), dropped afterwards."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(postgres)
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE scores (id integer PRIMARY KEY, name text, score double precision)")
        for row in [(5, "e", 0.5), (3, None, None), (1, "a", 0.1), (4, "d", 0.4), (2, "b", 0.2)]:
            connection.exec_driver_sql("INSERT INTO scores VALUES (%s, %s, %s)", row)
    try:
        yield engine
    finally:
        with engine.begin() as connection:
            connection.exec_driver_sql("DROP TABLE scores")
        engine.dispose()


def _ids(engine) -> list[int]:
    with engine.connect() as connection:
        return [row[0] for row in connection.exec_driver_sql("SELECT id FROM scores")]


def test_the_same_rows_in_another_order_keep_the_export_byte_for_byte(postgres, scores, tmp_path):
    export = tmp_path / "query.parquet"
    export_query("SELECT * FROM scores", "${DB_URL}", str(export), {"DB_URL": postgres})
    before, stat = export.read_bytes(), export.stat()
    with scores.begin() as connection:
        connection.exec_driver_sql("CLUSTER scores USING scores_pkey")  # rewrites the table in id order
    assert _ids(scores) == [1, 2, 3, 4, 5] != pq.read_table(export).column("id").to_pylist()
    export_query("SELECT * FROM scores", "${DB_URL}", str(export), {"DB_URL": postgres})
    assert export.read_bytes() == before  # the run stays up to date: no new model for the same rows
    assert (export.stat().st_ino, export.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)


@pytest.mark.parametrize(
    "update",
    [
        "UPDATE scores SET score = 0.35 WHERE id = 4",
        "UPDATE scores SET score = 'NaN' WHERE id = 3",  # NULL -> NaN: both NaN once in pandas
        "UPDATE scores SET name = 'None' WHERE id = 3",  # NULL -> the text 'None'
        "UPDATE scores SET score = 0.1 WHERE id = 2",  # the same values, in other rows
    ],
)
def test_a_changed_value_replaces_the_export(postgres, scores, tmp_path, update):
    export = tmp_path / "query.parquet"
    export_query("SELECT * FROM scores ORDER BY id", "${DB_URL}", str(export), {"DB_URL": postgres})
    before = pq.read_table(export)
    with scores.begin() as connection:
        connection.exec_driver_sql(update)
    export_query("SELECT * FROM scores ORDER BY id", "${DB_URL}", str(export), {"DB_URL": postgres})
    after = pq.read_table(export)
    assert after.num_rows == 5 and not after.equals(before)
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".")]  # no partial file left


def test_columns_of_one_name_are_refused_naming_them(postgres, make_spec, spec_problems, monkeypatch):
    monkeypatch.setenv("DB_URL", postgres)
    sql = "SELECT s.*, t.tips AS fare, t.company FROM trips s JOIN trips t USING (id)"
    (problem,) = [p for p in spec_problems(_sql_spec(make_spec, sql)) if p.path == "data.sql"]
    assert problem.message.startswith("the query's result has several columns named `fare`, `company`")
    assert "Received: columns id, fare, tips, trip_miles, company, paid_card, day, never, fare, company" in (
        problem.message
    )
    assert "Give each its own name with AS in `data.sql`, e.g. `... AS fare_2`" in problem.message


def test_a_uuid_column_is_exported_as_its_text(postgres, tmp_path, make_spec, monkeypatch):
    monkeypatch.setenv("DB_URL", postgres)
    sql = "SELECT *, gen_random_uuid() AS u, CASE WHEN id > 0 THEN gen_random_uuid() END AS maybe FROM trips"
    resolved = load_spec(str(_sql_spec(make_spec, sql)), cwd=str(tmp_path))
    table = pq.read_table(resolved.data_path)
    assert table.schema.field("u").type == table.schema.field("maybe").type == pa.string()
    values = table.column("u").to_pylist()
    assert len(set(values)) == 30 and all(str(uuid.UUID(value)) == value for value in values)
    assert table.column("maybe").null_count == 1  # id 0


@pytest.mark.parametrize("expression", ["now() - day", "CAST(NULL AS interval)"])
def test_an_interval_column_is_refused_at_export_naming_it(postgres, make_spec, spec_problems, monkeypatch, expression):
    monkeypatch.setenv("DB_URL", postgres)
    sql = f"SELECT *, {expression} AS age FROM trips"
    (problem,) = [p for p in spec_problems(_sql_spec(make_spec, sql)) if p.path == "data.sql"]
    assert problem.message.startswith("column `age` of the query's result holds durations (an interval).")
    assert "Received: duration[us]" in problem.message
    assert "e.g. `EXTRACT(EPOCH FROM age) AS age_seconds`" in problem.message


def test_no_password_in_problems_or_files(postgres, tmp_path, make_spec, spec_problems, monkeypatch):
    monkeypatch.setenv("DB_URL", postgres)
    problems = spec_problems(_sql_spec(make_spec, "SELECT * FROM no_such_table"))
    (problem,) = [p for p in problems if p.path == "data.sql"]
    assert 'relation "no_such_table" does not exist' in problem.message
    assert "tfx:***@127.0.0.1" in problem.message and PASSWORD not in problem.message
    load_spec(str(_sql_spec(make_spec)), cwd=str(tmp_path))
    for folder, _, names in os.walk(tmp_path):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                assert PASSWORD.encode() not in handle.read(), os.path.join(folder, name)


def test_a_refused_connection_is_one_problem_on_the_connection(tmp_path, make_spec, spec_problems, monkeypatch):
    monkeypatch.setenv("DB_URL", f"postgresql://tfx:{PASSWORD}@127.0.0.1:{free_port()}/postgres")
    (problem,) = [p for p in spec_problems(_sql_spec(make_spec)) if p.path == "data.connection"]
    assert problem.message.startswith("the database at `postgresql://tfx:***@127.0.0.1:")
    assert "refused the connection" in problem.message and PASSWORD not in problem.message
    assert "Check that the server is up" in problem.message


def test_a_wrong_password_is_refused_without_showing_it(postgres, tmp_path, make_spec, spec_problems, monkeypatch):
    monkeypatch.setenv("DB_URL", postgres.replace(PASSWORD, "wrong-pw-123"))
    (problem,) = [p for p in spec_problems(_sql_spec(make_spec)) if p.path == "data.connection"]
    assert "password authentication failed" in problem.message and "wrong-pw-123" not in problem.message


def test_an_unset_variable_is_named(tmp_path, make_spec, spec_problems, monkeypatch):
    monkeypatch.delenv("DB_URL", raising=False)
    (problem,) = [p for p in spec_problems(_sql_spec(make_spec)) if p.path == "data.connection"]
    assert problem.message.startswith("environment variable `DB_URL` is not set.")
    assert "export DB_URL=postgresql://" in problem.message


def _sqlite(path, rows, company_type: str = "TEXT") -> str:
    with sqlite3.connect(path) as db:  # written by Python's sqlite3, not by our code
        db.execute(f"CREATE TABLE trips (id INTEGER, fare REAL, tips REAL, trip_miles REAL, company {company_type})")
        db.executemany("INSERT INTO trips VALUES (?, ?, ?, ?, ?)", rows)
    return f"sqlite:///{path}"


def test_a_sqlite_query_validates_with_types_from_its_values(tmp_path, make_spec, monkeypatch):
    rows = [(i, 5 + i * 0.75, (i % 4) * 0.9, None if i % 5 == 0 else 0.5 + i, COMPANIES[i % 3]) for i in range(30)]
    monkeypatch.setenv("DB_URL", _sqlite(tmp_path / "trips.db", rows))
    resolved = load_spec(
        str(_sql_spec(make_spec, "SELECT fare, tips, trip_miles, company FROM trips")), cwd=str(tmp_path)
    )
    table = pq.read_table(resolved.data_path)
    assert table.schema.types == [pa.float64(), pa.float64(), pa.float64(), pa.string()]
    assert table.column("trip_miles").null_count == 6


def test_a_sqlite_column_of_several_types_asks_for_a_cast(tmp_path, make_spec, spec_problems, monkeypatch):
    rows = [(i, 5.0, 1.0, 2.0, "x" if i % 2 else i) for i in range(30)]
    monkeypatch.setenv("DB_URL", _sqlite(tmp_path / "mixed.db", rows, company_type=""))  # no type: any value
    (problem,) = [p for p in spec_problems(_sql_spec(make_spec, "SELECT * FROM trips")) if p.path == "data.sql"]
    assert "column `company` of the query's result holds values of several types (int, str)" in problem.message


@pytest.mark.parametrize(
    "data,expected",
    [
        ({"sql": "SELECT 1"}, "`sql` and `connection` go together"),
        ({"path": "taxi.csv", "sql": "SELECT 1", "connection": "sqlite://"}, "Received: both"),
        ({"sql": "SELECT 1", "connection": "sqlite://", "format": "csv"}, "`format` is for files"),
    ],
)
def test_bad_data_sections(make_spec, spec_problems, data, expected):
    (problem,) = [p for p in spec_problems(make_spec({"data": data})) if p.path.startswith("data")]
    assert expected in problem.message


def test_the_connection_helpers():
    assert expand_connection("postgresql://u:${PW}@h/${DB}", {"PW": "p", "DB": "d"}) == "postgresql://u:p@h/d"
    assert redacted("postgresql://u:p@h:5/d") == "postgresql://u:***@h:5/d"
    with pytest.raises(SqlProblem, match="`PW` is not set"):
        expand_connection("postgresql://u:${PW}@h/d", {})


def test_the_docs_example_validates_on_postgres(postgres, tmp_path, make_spec, monkeypatch):
    import re

    import yaml
    from taxi_fixtures import REPO

    with open(os.path.join(REPO, "docs", "data.md"), encoding="utf-8") as handle:
        block = re.search(r"<!-- sql-example: yaml -->\n```yaml\n(.*?)```", handle.read(), re.S).group(1)
    monkeypatch.setenv("DB_URL", postgres)
    resolved = load_spec(str(make_spec({"data": yaml.safe_load(block)["data"]})), cwd=str(tmp_path))
    assert pq.read_metadata(resolved.data_path).num_rows == 30


def test_the_exported_rows_become_examples_with_nulls_missing(postgres, tmp_path, make_spec, monkeypatch):
    import tensorflow as tf
    from google.protobuf import json_format, message
    from tfx.types import standard_artifacts, standard_component_specs

    from components.example_gen.formats import executor as formats_executor
    from pipelines.compiler import compile_pipeline

    monkeypatch.setenv("DB_URL", postgres)
    resolved = load_spec(str(_sql_spec(make_spec)), cwd=str(tmp_path))
    (component,) = [c for c in compile_pipeline(resolved).components if c.id == "ExampleGen"]
    assert type(component).__name__ == "FileExampleGen"
    properties = {
        key: json_format.MessageToJson(value) if isinstance(value, message.Message) else value
        for key, value in component.exec_properties.items()
        if value is not None
    }
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    formats_executor.Executor().Do({}, {standard_component_specs.EXAMPLES_KEY: [examples]}, properties)
    rows = []
    for split in ("train", "eval"):
        files = [str(p) for p in (tmp_path / "examples" / f"Split-{split}").glob("*.gz")]
        for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
            rows.append(tf.train.Example.FromString(record.numpy()).features.feature)
    assert len(rows) == 30
    assert sorted(rows[0]) == ["company", "fare", "tips", "trip_miles"]  # only the columns the spec uses
    assert sum(1 for f in rows if not f["trip_miles"].float_list.value) == 4  # the NULLs
    assert sum(1 for f in rows if not f["company"].bytes_list.value) == 10
