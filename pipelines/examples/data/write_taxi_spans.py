"""Cuts the taxi data that ships inside TFX into one span per year: `taxi_spans/span-<N>/data.csv`.

The rows' `trip_start_timestamp` runs from 2013 to 2016; span N holds the trips that started in year
2012 + N (UTC), rows in the file's order, so spans 1-4 are 2013-2016 (4388, 5145, 4636 and 833 rows).
Each file is written under a hidden name and renamed into place, so a run never sees half a span.
Nothing is downloaded and the files are not checked in: the walk-through in `docs/spans.md` writes
them one delivery at a time.

Usage:
    .venv/bin/python pipelines/examples/data/write_taxi_spans.py 2013 2014 2015   # spans 1-3
    .venv/bin/python pipelines/examples/data/write_taxi_spans.py 2016             # span 4 arrives
    .venv/bin/python pipelines/examples/data/write_taxi_spans.py 2013             # span 1 re-delivered
    .venv/bin/python pipelines/examples/data/write_taxi_spans.py --drifted        # span 5: 2016 paid by "Mobile"
"""

from __future__ import annotations

import argparse
import csv
import datetime
import importlib.util
import os
import sys

__all__ = ["FIRST_YEAR", "SPANS_DIR", "taxi_rows_by_year", "write_span", "main"]

FIRST_YEAR = 2013  # span 1
SPANS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "taxi_spans")
DRIFTED_PAYMENT = "Mobile"  # a payment method the taxi data never has: drift 1.0 in `payment_type`


def _taxi_csv() -> str:
    tfx_dir = os.path.dirname(importlib.util.find_spec("tfx").origin)
    return os.path.join(tfx_dir, "examples", "chicago_taxi_pipeline", "data", "simple", "data.csv")


def taxi_rows_by_year() -> tuple[list[str], dict[int, list[list[str]]]]:
    """(header, year -> rows) of the taxi CSV in TFX's package, each row's year from `trip_start_timestamp`."""
    with open(_taxi_csv(), newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        column = header.index("trip_start_timestamp")
        years: dict[int, list[list[str]]] = {}
        for row in reader:
            started = datetime.datetime.fromtimestamp(int(row[column]), tz=datetime.timezone.utc)
            years.setdefault(started.year, []).append(row)
    return header, years


def write_span(folder: str, number: int, header: list[str], rows: list[list[str]]) -> str:
    """Writes `<folder>/span-<number>/data.csv` whole (a hidden temporary file, then a rename); returns its path
    (relative when under the current folder)."""
    span_dir = os.path.join(folder, f"span-{number}")
    os.makedirs(span_dir, exist_ok=True)
    path = os.path.join(span_dir, "data.csv")
    staging = os.path.join(span_dir, f".data.csv.tmp-{os.getpid()}")
    with open(staging, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    os.replace(staging, path)
    return os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("years", nargs="*", type=int, help="the years to write, each as span YEAR-2012 (default: all)")
    parser.add_argument("--out", default=SPANS_DIR, help="the folder of the span-<N> folders (default: %(default)s)")
    parser.add_argument(
        "--drifted",
        action="store_true",
        help=f"also write the span after the newest year: its rows again, every `payment_type` {DRIFTED_PAYMENT!r}",
    )
    args = parser.parse_args(argv)
    header, by_year = taxi_rows_by_year()
    unknown = sorted(set(args.years) - set(by_year))
    if unknown:
        parser.error(
            f"no taxi rows in year(s) {', '.join(map(str, unknown))}. "
            f"Expected years {min(by_year)}-{max(by_year)}. Pick years among those."
        )
    years = args.years or ([] if args.drifted else sorted(by_year))
    for year in years:
        path = write_span(args.out, year - FIRST_YEAR + 1, header, by_year[year])
        print(f"span {year - FIRST_YEAR + 1} ({year}): {len(by_year[year])} rows -> {path}")
    if args.drifted:
        newest = max(by_year)
        payment = header.index("payment_type")
        rows = [[DRIFTED_PAYMENT if i == payment else cell for i, cell in enumerate(row)] for row in by_year[newest]]
        number = newest - FIRST_YEAR + 2
        path = write_span(args.out, number, header, rows)
        print(f"span {number} (drifted: {newest}'s rows, payment_type {DRIFTED_PAYMENT}): {len(rows)} rows -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
