"""`pipelines/examples/data/write_taxi_spans.py`: the taxi rows cut into one span per year, run as a user runs it."""

from __future__ import annotations

import csv
import datetime
import os
import subprocess
import sys

from example_runs import EXAMPLES
from taxi_fixtures import TAXI_CSV

SCRIPT = os.path.join(EXAMPLES, "data", "write_taxi_spans.py")


def write(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=120)


def read_rows(path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    return header, rows


def test_every_taxi_row_lands_in_the_span_of_its_year_once(tmp_path):
    done = write("--out", str(tmp_path))

    assert done.returncode == 0, done.stderr
    source_header, source_rows = read_rows(TAXI_CSV)
    column = source_header.index("trip_start_timestamp")
    written = []
    for number in (1, 2, 3, 4):
        header, rows = read_rows(tmp_path / f"span-{number}" / "data.csv")
        assert header == source_header
        years = {datetime.datetime.fromtimestamp(int(row[column]), tz=datetime.timezone.utc).year for row in rows}
        assert years == {2012 + number}
        written += rows
    assert sorted(written) == sorted(source_rows)
    assert sorted(os.listdir(tmp_path)) == ["span-1", "span-2", "span-3", "span-4"]
    assert os.listdir(tmp_path / "span-1") == ["data.csv"]  # no staging file left beside it


def test_the_drifted_span_is_the_newest_year_paid_by_a_new_method(tmp_path):
    done = write("--drifted", "--out", str(tmp_path))

    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == ["span-5"]
    header, rows = read_rows(tmp_path / "span-5" / "data.csv")
    assert write("2016", "--out", str(tmp_path)).returncode == 0
    _, span_4 = read_rows(tmp_path / "span-4" / "data.csv")
    payment = header.index("payment_type")
    assert {row[payment] for row in rows} == {"Mobile"}
    assert [row[:payment] + row[payment + 1 :] for row in rows] == [r[:payment] + r[payment + 1 :] for r in span_4]


def test_a_year_without_taxi_rows_is_one_error_naming_the_years_there_are(tmp_path):
    done = write("2019", "--out", str(tmp_path))

    assert done.returncode == 2
    assert "error: no taxi rows in year(s) 2019. Expected years 2013-2016. Pick years among those." in done.stderr
    assert "Traceback" not in done.stderr
    assert not os.listdir(tmp_path)
