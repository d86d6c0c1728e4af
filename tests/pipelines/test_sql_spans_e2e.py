"""End to end: `{SPAN}` in `data.sql` on a real PostgreSQL server; a run ingests only the spans it has not.

One module fixture, three CLI runs on one root (`data.window: 2`): the table holds spans 1 and 2 (300
taxi rows each); the first run exports both, ingests span 1 alone and trains on 1-2; span 3's rows are
inserted and span 1's rows changed in the database; the second run exports span 3 alone, ExampleGen
ingests span 3 alone (span 1's changed rows are not queried: an exported span is immutable) and the
Trainer reads 2-3; `run --span 1` then queries span 1 again and ingests it alone (ExampleGen and
StatisticsGen). Asserted from ML Metadata and the export files.
"""

from __future__ import annotations

import csv
import os
import time

import pyarrow.parquet as pq
import pytest
from mlmd_queries import max_execution_id, nodes_between, store_for
from postgres_server import PASSWORD, postgres_engine
from taxi_fixtures import run_cli, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

NAME = "sql_spans"
ROWS_PER_SPAN = 300


def spans_of(metadata: str, node: str, after_id: int, until_id: int, outputs: bool) -> list[int]:
    """The `span`s of the Examples that `node`'s executions in (after_id, until_id] wrote (or read), sorted."""
    from ml_metadata.proto import metadata_store_pb2

    event = metadata_store_pb2.Event
    wanted = (event.OUTPUT, event.DECLARED_OUTPUT) if outputs else (event.INPUT, event.DECLARED_INPUT)
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", f"{NAME}.{node}")
    ids = [e.id for e in store.get_executions_by_context(context.id) if after_id < e.id <= until_id]
    events = [e for e in store.get_events_by_execution_ids(ids) if e.type in wanted]
    artifacts = store.get_artifacts_by_id([e.artifact_id for e in events])
    return sorted(a.properties["span"].int_value for a in artifacts if a.type == "Examples")


def _column_types(header: list[str], rows: list[list[str]]) -> list[str]:
    """PostgreSQL types by the CSV's cells: bigint, double precision, or text."""

    def fits(cells, kind) -> bool:
        try:
            [kind(cell) for cell in cells if cell != ""]
        except ValueError:
            return False
        return True

    types = []
    for index in range(len(header)):
        cells = [row[index] for row in rows]
        types.append("bigint" if fits(cells, int) else "double precision" if fits(cells, float) else "text")
    return types


def _insert(engine, header, types, rows, span: int) -> None:
    def value(cell, kind):
        if cell == "":
            return None
        return int(cell) if kind == "bigint" else float(cell) if kind == "double precision" else cell

    placeholders = ", ".join(["%s"] * (len(header) + 1))
    with engine.begin() as connection:
        connection.exec_driver_sql(
            f"INSERT INTO trips VALUES ({placeholders})",
            [(span, *(value(c, t) for c, t in zip(row, types))) for row in rows],
        )


@pytest.fixture(scope="module")
def runs(taxi_sample_csv, tmp_path_factory):
    with open(taxi_sample_csv, encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    spans = {n: rows[(n - 1) * ROWS_PER_SPAN : n * ROWS_PER_SPAN] for n in (1, 2, 3)}
    types = _column_types(header, rows[: 3 * ROWS_PER_SPAN])
    folder = tmp_path_factory.mktemp("sql_spans")
    root = folder / "run"
    spec = taxi_spec("unused", str(root), pipeline={"name": NAME})
    spec["data"] = {
        "sql": "SELECT * FROM trips WHERE span = {SPAN}",
        "spans_sql": "SELECT DISTINCT span FROM trips",
        "connection": "${DB_URL}",
        "window": 2,
        "checks": {"unseen_categories": 0.3},  # 300 rows a span: ~100 eval rows, a rare company is 1%
    }
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(folder / "spec.yaml", spec)
    metadata = str(root / "metadata.sqlite")
    exports = root / "data" / "sql"
    with postgres_engine() as (url, engine):
        columns = ", ".join(f'"{name}" {kind}' for name, kind in zip(header, types))
        with engine.begin() as connection:
            connection.exec_driver_sql(f"CREATE TABLE trips (span integer, {columns})")
        for number in (1, 2):
            _insert(engine, header, types, spans[number], number)
        os.environ["DB_URL"] = url
        try:
            result = {"metadata": metadata, "marks": [0], "seconds": []}
            for step in ("first", "second", "backfill"):
                if step == "second":
                    _insert(engine, header, types, spans[3], 3)
                    with engine.begin() as connection:
                        connection.exec_driver_sql("UPDATE trips SET fare = fare + 1000 WHERE span = 1")
                result[f"before_{step}"] = {p.parent.name: p.stat() for p in exports.glob("span-*/query.parquet")}
                started = time.perf_counter()
                completed = run_cli(spec_file, *(["--span", "1"] if step == "backfill" else []))
                result["seconds"].append(time.perf_counter() - started)
                assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
                result[step] = completed
                result["marks"].append(max_execution_id(metadata))
        finally:
            os.environ.pop("DB_URL", None)
    result["after_backfill"] = {p.parent.name: p.stat() for p in exports.glob("span-*/query.parquet")}
    result["root"] = str(root)
    result["span_1_fares"] = pq.read_table(exports / "span-1" / "query.parquet", columns=["fare"]).column(0).to_pylist()
    print(f"sql_spans e2e: runs took {', '.join(f'{s:.1f}' for s in result['seconds'])} s")
    return result


def test_the_first_run_ingests_both_spans_and_trains_on_them(runs):
    metadata, marks = runs["metadata"], runs["marks"]
    assert "exported span(s) 1, 2 (0 exported before)" in runs["first"].stderr
    assert "Ingesting span 1 (1 file(s))." in runs["first"].stdout
    assert spans_of(metadata, "ExampleGen", marks[0], marks[1], outputs=True) == [1, 2]
    assert spans_of(metadata, "Trainer", marks[0], marks[1], outputs=False) == [1, 2]
    assert "Pushed: " in runs["first"].stdout


def test_the_second_run_queries_and_ingests_only_the_new_span(runs):
    metadata, marks = runs["metadata"], runs["marks"]
    assert "exported span(s) 3 (2 exported before)" in runs["second"].stderr
    assert "1 data file(s); span 3, root" in runs["second"].stdout and "Ingesting" not in runs["second"].stdout
    assert spans_of(metadata, "ExampleGen", marks[1], marks[2], outputs=True) == [3]  # spans 1, 2 not read again
    assert spans_of(metadata, "Trainer", marks[1], marks[2], outputs=False) == [2, 3]  # the window of 2
    before, after = runs["before_second"], runs["before_backfill"]
    assert sorted(after) == ["span-1", "span-2", "span-3"]
    for name in ("span-1", "span-2"):  # not queried again: span 1's changed rows stay out
        assert (after[name].st_ino, after[name].st_mtime_ns) == (before[name].st_ino, before[name].st_mtime_ns)


def test_a_backfill_queries_its_span_again_and_ingests_it_alone(runs):
    metadata, marks = runs["metadata"], runs["marks"]
    assert "Backfilled span 1: later windows read it." in runs["backfill"].stdout
    assert spans_of(metadata, "ExampleGen", marks[2], marks[3], outputs=True) == [1]
    assert "Trainer" not in nodes_between(metadata, marks[2], marks[3])  # span 1 is not the newest
    assert min(fare for fare in runs["span_1_fares"] if fare is not None) >= 1000  # the rows changed in the database
    before, after = runs["before_backfill"], runs["after_backfill"]
    for name in ("span-2", "span-3"):
        assert (after[name].st_ino, after[name].st_mtime_ns) == (before[name].st_ino, before[name].st_mtime_ns)


def test_no_password_in_the_root(runs):
    for folder, _, names in os.walk(runs["root"]):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                assert PASSWORD.encode() not in handle.read(), os.path.join(folder, name)
