"""`{SPAN}` in `data.sql` against a real PostgreSQL server (started here): one export per span.

`validate` runs `spans_sql`, exports each listed span that has no export yet to
`<root>/data/sql/span-N/query.parquet` and leaves the exported ones alone (not
queried again); `run --span N` queries span N again. Bad placeholders and bad
span lists are one problem each, on the key to fix; no password reaches a
message or a file.
"""

from __future__ import annotations

import json
import os
import re
import sys

import pyarrow.parquet as pq
import pytest
from postgres_server import PASSWORD, postgres_engine

from pipelines import cli
from pipelines.load import load_spec
from pipelines.runners.spans import export_backfilled_span
from pipelines.spec.span_rules import describe_spans
from pipelines.spec.sql_spans import span_query

COMPANIES = ["Flash Cab", "Blue Ribbon", "Taxi Affiliation Services"]
SQL = "SELECT year, fare, tips, trip_miles, company FROM {table} WHERE year = {{SPAN}} ORDER BY fare"
SPANS_SQL = "SELECT DISTINCT year FROM {table}"


@pytest.fixture(scope="module")
def postgres():
    with postgres_engine() as (url, engine):
        yield url, engine


def _insert(engine, table: str, year: int, rows: int = 30, fare_shift: float = 0.0) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql(
            f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s)",
            [(year, 5 + i * 0.75 + fare_shift, (i % 4) * 0.9, 0.5 + i * 0.3, COMPANIES[i % 3]) for i in range(rows)],
        )


def _table(engine, name: str, years) -> str:
    with engine.begin() as connection:
        connection.exec_driver_sql(
            f"CREATE TABLE {name} (year integer, fare numeric(8, 2), tips real, trip_miles double precision, "
            "company text)"
        )
    for year in years:
        _insert(engine, name, year)
    return name


def _spec(make_spec, table: str, **data):
    section = {"sql": SQL.format(table=table), "spans_sql": SPANS_SQL.format(table=table), "connection": "${DB_URL}"}
    return make_spec({"data": {**section, **data}})


def _exports(tmp_path) -> dict[int, os.stat_result]:
    folder = tmp_path / "runs" / "taxi_small" / "data" / "sql"
    return {int(p.parent.name.split("-")[1]): p.stat() for p in folder.glob("span-*/query.parquet")}


def _years(path) -> set[int]:
    return set(pq.read_table(path, columns=["year"]).column("year").to_pylist())


def test_validate_exports_each_span_once_and_lists_the_spans(postgres, tmp_path, make_spec, monkeypatch, capsys):
    url, engine = postgres
    monkeypatch.setenv("DB_URL", url)
    table = _table(engine, "trips_new", [2021, 2022, 2023])
    spec = _spec(make_spec, table)

    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["validate", str(spec)]) == 0
    out, err = capsys.readouterr()
    assert "Spans: 3 span(s), newest span 2023, oldest span 2021; no gaps." in out
    assert "note: data.sql: exported span(s) 2021, 2022, 2023 (0 exported before)." in err
    first = _exports(tmp_path)
    assert sorted(first) == [2021, 2022, 2023]
    pattern = tmp_path / "runs" / "taxi_small" / "data" / "sql" / "span-{}" / "query.parquet"
    for year in first:
        assert _years(str(pattern).format(year)) == {year}  # `{SPAN}` became the span's number
        assert pq.read_metadata(str(pattern).format(year)).num_rows == 30
        assert os.listdir(os.path.dirname(str(pattern).format(year))) == ["query.parquet"]  # no partial file left

    # A 4th span arrives; span 2021's rows change in the database, which an exported span does not see.
    _insert(engine, table, 2024)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"UPDATE {table} SET fare = fare + 100 WHERE year = 2021")
    resolved = load_spec(str(spec), cwd=str(tmp_path))
    assert "exported span(s) 2024 (3 exported before)." in capsys.readouterr().err
    second = _exports(tmp_path)
    assert sorted(second) == [2021, 2022, 2023, 2024]
    for year in first:  # not written again: the same file, the same time
        assert (second[year].st_ino, second[year].st_mtime_ns) == (first[year].st_ino, first[year].st_mtime_ns)
    assert [span.number for span in resolved.spans] == [2021, 2022, 2023, 2024]
    assert resolved.data_files == (str(pattern).format(2024),)  # the newest span is what validate profiled
    assert describe_spans(resolved.spans).startswith("4 span(s), newest span 2024")
    assert max(pq.read_table(str(pattern).format(2021)).column("fare").to_pylist()) < 100

    # `run --span 2021` queries span 2021 again (a corrected span) and no other.
    export_backfilled_span(resolved, 2021)
    third = _exports(tmp_path)
    assert min(pq.read_table(str(pattern).format(2021)).column("fare").to_pylist()) > 100
    for year in (2022, 2023, 2024):
        assert (third[year].st_ino, third[year].st_mtime_ns) == (second[year].st_ino, second[year].st_mtime_ns)
    for folder, _, names in os.walk(tmp_path):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                assert PASSWORD.encode() not in handle.read(), os.path.join(folder, name)


def test_a_backfill_names_the_spans_that_spans_sql_lists(postgres, tmp_path, make_spec, monkeypatch, capsys):
    url, engine = postgres
    monkeypatch.setenv("DB_URL", url)
    spec = _spec(make_spec, _table(engine, "trips_backfill", [1, 2]))
    monkeypatch.setattr(sys, "path", list(sys.path))  # the CLI puts the spec's folder first
    monkeypatch.chdir(tmp_path)  # the root, runs/taxi_small, under tmp_path
    assert cli.main(["run", str(spec), "--span", "9"]) == 2
    err = capsys.readouterr().err
    assert "--span 9: `data.spans_sql` lists no such span. Expected one of the spans it lists (newest: 1, 2)" in err
    assert sorted(_exports(tmp_path)) == [1, 2]


def test_a_query_without_spans_refuses_span(postgres, tmp_path, make_spec, monkeypatch, capsys):
    url, engine = postgres
    monkeypatch.setenv("DB_URL", url)
    table = _table(engine, "trips_plain", [1])
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    spec = make_spec({"data": {"sql": f"SELECT * FROM {table}", "connection": "${DB_URL}"}})
    assert cli.main(["run", str(spec), "--span", "1"]) == 2
    assert "--span 1: `data.sql` has no `{SPAN}`. Expected a query such as" in capsys.readouterr().err


@pytest.mark.parametrize(
    "data,key,expected",
    [
        ({"spans_sql": None}, "data.spans_sql", "`{SPAN}` in `sql` makes the query's rows spans, and nothing lists"),
        ({"sql": "SELECT * FROM {table}"}, "data.spans_sql", "`sql` has no `{SPAN}` to put them in"),
        ({"sql": "SELECT * FROM {table} WHERE year = {SPAN} AND v = {VERSION}"}, "data.sql", "`{VERSION}` in a query"),
        ({"sql": "SELECT * FROM {table} WHERE {SPAN} = 1 AND d = '{YYYY}-{MM}'"}, "data.sql", "`{YYYY}` in a query"),
        ({"sql": "SELECT * FROM {table} WHERE year = {SPAN:x}"}, "data.sql", "`{SPAN:x}` is not a span placeholder"),
        ({"spans_sql": "SELECT DISTINCT company FROM {table}"}, "data.spans_sql", "(str), which is not a span number"),
        ({"spans_sql": "SELECT 2.5"}, "data.spans_sql", "returned '2.5' (Decimal), which is not a span number"),
        ({"spans_sql": "SELECT NULL::integer"}, "data.spans_sql", "returned NULL, which is not a span number"),
        ({"spans_sql": "SELECT -1"}, "data.spans_sql", "returned -1, which is not a span number. Expected whole"),
        ({"spans_sql": "SELECT year FROM {table} WHERE false"}, "data.spans_sql", "`spans_sql` returned no rows"),
        ({"spans_sql": "SELECT year, fare FROM {table}"}, "data.spans_sql", "returns 2 columns (year, fare)"),
        ({"spans_sql": "SELECT 99"}, "data.sql", "the query for span 99 (which `spans_sql` lists) returned no rows"),
        ({"spans_sql": "SELECT nope FROM {table}"}, "data.spans_sql", 'column "nope" does not exist'),
        ({"sql": "SELECT * FROM {table}", "spans_sql": None, "window": 2}, "data.window", "has no `{SPAN}`"),
    ],
)
def test_bad_span_queries_are_one_problem_on_the_key(
    postgres, make_spec, spec_problems, monkeypatch, data, key, expected
):
    url, engine = postgres
    monkeypatch.setenv("DB_URL", url)
    table = "trips_bad"
    if not _exists(engine, table):
        _table(engine, table, [1, 2])
    section = {k: v.replace("{table}", table) if isinstance(v, str) else v for k, v in data.items()}
    problems = [p for p in spec_problems(_spec(make_spec, table, **section)) if p.path.startswith("data")]
    assert [p.path for p in problems] == [key], problems
    assert expected in problems[0].message
    assert PASSWORD not in problems[0].message


def _exists(engine, table: str) -> bool:
    import sqlalchemy

    return sqlalchemy.inspect(engine).has_table(table)


def test_spans_sql_belongs_to_a_query(make_spec, spec_problems):
    problems = spec_problems(make_spec({"data.spans_sql": "SELECT 1"}))
    (problem,) = [p for p in problems if p.path.startswith("data")]
    assert "`spans_sql` lists the span numbers of a query" in problem.message


def test_a_bigquery_query_with_spans_is_refused(make_spec, spec_problems):
    spec = make_spec(
        {
            "data": {"sql": "SELECT * FROM t WHERE y = {SPAN}", "spans_sql": "SELECT 1", "connection": "bigquery://p"},
            "orchestrator": {"target": "kubeflow"},
        }
    )
    (problem,) = [p for p in spec_problems(spec) if p.path.startswith("data")]
    assert problem.path == "data.sql" and "`{SPAN}` in a BigQuery query" in problem.message


def test_the_span_number_is_formatted_into_the_query():
    assert span_query("WHERE a = {SPAN} AND b = '{SPAN:4}'", 7) == "WHERE a = 7 AND b = '0007'"
    assert span_query("WHERE a = {SPAN:2}", 123) == "WHERE a = 123"
    with pytest.raises((TypeError, ValueError)):
        span_query("WHERE a = {SPAN}", "1; DROP TABLE trips")


def test_the_docs_example_validates_on_postgres(postgres, tmp_path, make_spec, monkeypatch, capsys):
    import yaml
    from taxi_fixtures import REPO

    url, engine = postgres
    with open(os.path.join(REPO, "docs", "data.md"), encoding="utf-8") as handle:
        block = re.search(r"<!-- sql-spans-example: yaml -->\n```yaml\n(.*?)```", handle.read(), re.S).group(1)
    if not _exists(engine, "trips"):
        _table(engine, "trips", [2022, 2023, 2024])
    monkeypatch.setenv("DB_URL", url)
    resolved = load_spec(str(make_spec({"data": yaml.safe_load(block)["data"]})), cwd=str(tmp_path))
    assert [span.number for span in resolved.spans] == [2022, 2023, 2024]
    assert resolved.spec.data.window == 2
    assert pq.read_metadata(resolved.data_files[0]).num_rows == 30


def test_on_the_airflow_target_a_window_is_refused_as_with_file_spans(postgres, make_spec, spec_problems, monkeypatch):
    url, engine = postgres
    monkeypatch.setenv("DB_URL", url)
    if not _exists(engine, "trips_bad"):
        _table(engine, "trips_bad", [1, 2])
    spec = _spec(make_spec, "trips_bad", window=2)
    spec.write_text(spec.read_text(encoding="utf-8") + "orchestrator: {target: airflow}\n", encoding="utf-8")
    (problem,) = [p for p in spec_problems(spec) if p.path.startswith("data")]
    assert problem.path == "data.window" and "the airflow target trains on the newest span alone" in problem.message


def test_a_compiled_pipeline_reads_the_exports_as_file_spans(postgres, tmp_path, make_spec, monkeypatch):
    """The beam/airflow targets compile without a range: TFX's driver takes the newest exported span."""
    from pipelines.compiler import compile_pipeline

    url, engine = postgres
    monkeypatch.setenv("DB_URL", url)
    if not _exists(engine, "trips_bad"):
        _table(engine, "trips_bad", [1, 2])
    resolved = load_spec(str(_spec(make_spec, "trips_bad")), cwd=str(tmp_path), target="beam")
    (component,) = [c for c in compile_pipeline(resolved).components if c.id == "ExampleGen"]
    assert type(component).__name__ == "FileExampleGen"
    properties = component.exec_properties
    assert properties["input_base"] == str(tmp_path / "runs" / "taxi_small" / "data" / "sql")
    split = json.loads(properties["input_config"])["splits"][0]  # TFX keeps the proto as JSON text
    assert split["pattern"] == "span-{SPAN}/query.parquet"
    assert properties.get("range_config") is None
