"""The Arrow-based profile of large CSVs equals the row-by-row one, and falls back to it for messages."""

from __future__ import annotations

import gzip

import pytest
from taxi_fixtures import TAXI_CSV

from components.common.csv_dialect import CsvDialect
from pipelines.profiling import data_checks
from pipelines.profiling.data_checks import DataProblem, profile_csv

MESSY = (
    "id,price,kind,score,note\n"
    "1,NA,a,+3,x\n"
    "2, 5 ,b,1_000,\n"
    "\n"
    '3,"NA",c,nan,"two\nlines"\n'
    "4,Infinity,d,-2.5e3,y\n"
    "5,7,e,.5,\n"
)


def _both(monkeypatch, files, **kwargs):
    monkeypatch.setattr(data_checks, "FAST_MIN_BYTES", 10**12)
    slow = profile_csv(files, **kwargs)
    monkeypatch.setattr(data_checks, "FAST_MIN_BYTES", 0)
    fast = profile_csv(files, **kwargs)
    return slow, fast


@pytest.mark.parametrize(
    ("text", "kwargs"),
    [
        (MESSY, {"na_values": ("", "NA"), "non_finite": "impute", "keep_columns": ("price", "score")}),
        (MESSY, {"na_values": ("",), "non_finite": "impute", "keep_columns": ("id",)}),  # NA is text here
        ("a,b\n1,x\n1,x\n", {}),  # constant columns
        ("a,b\n1,\n2,\n", {"keep_columns": ("a", "b")}),  # an empty column
        ("a,b\n1,\n2,\n", {"na_values": ("NA",)}),  # "" not a missing marker: text
        ("a\n-0\n0.0\n", {}),  # equal numbers are one value
        # Columns Arrow reads whole as numbers (no regex, no float()): the same values as float() gives.
        (
            "a,b\ninf,1\n1e400,2.5\n-0,3e-5\n2.5,-7\n+4,0.1\nNaN,1e308\n",
            {"non_finite": "impute", "keep_columns": ("a", "b")},
        ),
        ("a,b\n1, 2\n3,1_0\n", {"keep_columns": ("a", "b")}),  # whitespace and `_`: float() reads them
        (
            MESSY.replace(",", ";"),
            {"na_values": ("", "NA"), "non_finite": "impute", "keep_columns": ("price",), "dialect": CsvDialect(";")},
        ),
        (
            "id, price, kind\n1,  NA, a\n2, 5, b\n3, ?, c\n",
            {"na_values": ("NA", "?"), "keep_columns": ("price",), "dialect": CsvDialect(",", True)},
        ),
    ],
    ids=[
        "messy",
        "na-as-text",
        "constant",
        "empty-column",
        "empty-is-text",
        "zeros",
        "arrow-numbers",
        "python-numbers",
        "semicolons",
        "spaces-after-commas",
    ],
)
def test_fast_profile_equals_the_row_by_row_profile(tmp_path, monkeypatch, text, kwargs):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    slow, fast = _both(monkeypatch, [str(path)], **kwargs)
    assert fast == slow


def test_fast_profile_of_the_taxi_data_in_two_files_one_gzipped(tmp_path, monkeypatch):
    lines = open(TAXI_CSV, encoding="utf-8").read().splitlines(keepends=True)
    (tmp_path / "a.csv").write_text("".join(lines[:5000]), encoding="utf-8")
    with gzip.open(tmp_path / "b.csv.gz", "wt", encoding="utf-8") as handle:
        handle.write(lines[0] + "".join(lines[5000:]))
    files = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv.gz")]
    slow, fast = _both(monkeypatch, files, keep_columns=("tips", "fare"))
    assert fast == slow
    assert fast.rows == len(lines) - 1
    assert "company" in fast.first_text and fast.first_text["company"][1] >= 2


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        ("a,b\n1,2\n3\n", {}, r"1 malformed row\(s\): expected 2 fields like the header; line 3 has 1"),
        ("a,b\n1,inf\n2,3\n", {}, r"column `b` holds 1 non-finite number\(s\): .* line 2: `inf`"),
        ("a,b\n", {}, r"has a header but no data rows"),
    ],
    ids=["malformed", "non-finite", "no-rows"],
)
def test_problems_get_the_row_by_row_message(tmp_path, monkeypatch, text, kwargs, message):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(data_checks, "FAST_MIN_BYTES", 0)
    with pytest.raises(DataProblem, match=message):
        profile_csv([str(path)], **kwargs)


def test_non_utf8_gets_the_row_by_row_message(tmp_path, monkeypatch):
    path = tmp_path / "data.csv"
    path.write_bytes(b"a,b\n1,\xff\xfe\n")
    monkeypatch.setattr(data_checks, "FAST_MIN_BYTES", 0)
    with pytest.raises(DataProblem, match="is not UTF-8 text"):
        profile_csv([str(path)])


@pytest.mark.parametrize(
    ("text", "dialect"),
    [
        (MESSY, CsvDialect()),
        ("a,b\n1,x\n1,x\n", CsvDialect()),
        ("a\n-0\n0.0\n", CsvDialect()),
        (MESSY.replace(",", "\t"), CsvDialect("\t")),
        ("id, price, kind, score, note\n1,  NA, a, 2, x\n", CsvDialect(",", True)),
    ],
    ids=["messy", "constant", "zeros", "tabs", "spaces-after-commas"],
)
def test_the_fast_path_itself_profiles_these_files(tmp_path, text, dialect):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    header = dialect.cells(text.split("\n", 1)[0].split(dialect.delimiter))
    profile = data_checks.fast_profile(
        [str(path)],
        header,
        ("", "NA"),
        "impute",
        (),
        data_checks._open_text,  # noqa: SLF001
        dialect=dialect,
    )
    assert profile is not None and profile.columns == tuple(header) and profile.dialect == dialect
    if len(header) == 5:  # MESSY, with either separator
        assert profile.numeric == {"id", "price", "score"}


WIDE = "label,f0,unused_text,unused_inf,unused_gap\n1,0.5,abc,inf,\n0,1.5,def,1,\n"


@pytest.mark.parametrize("reader", ["row by row", "arrow"])
def test_only_the_columns_the_spec_uses_are_profiled(tmp_path, monkeypatch, reader):
    (tmp_path / "wide.csv").write_text(WIDE, encoding="utf-8")
    monkeypatch.setattr(data_checks, "FAST_MIN_BYTES", 10**12 if reader == "row by row" else 0)
    # `inf` in an unused column does not stop validate (`non_finite: error`): ExampleGen never writes it.
    profile = profile_csv([str(tmp_path / "wide.csv")], columns=("f0",), keep_columns=("label",))
    assert profile.columns == ("label", "f0", "unused_text", "unused_inf", "unused_gap")  # the whole header
    assert profile.numeric == {"label", "f0"}
    assert profile.first_text == {} and profile.empty == frozenset() and profile.missing == frozenset()
    assert set(profile.minimum) == {"label", "f0"} and profile.values == {"label": (1.0, 0.0)}


@pytest.mark.parametrize("reader", ["row by row", "arrow"])
def test_a_malformed_row_is_found_whatever_columns_are_profiled(tmp_path, monkeypatch, reader):
    (tmp_path / "bad.csv").write_text("a,b,c\n1,2,3\n4,5\n", encoding="utf-8")
    monkeypatch.setattr(data_checks, "FAST_MIN_BYTES", 10**12 if reader == "row by row" else 0)
    with pytest.raises(DataProblem, match="malformed row"):
        profile_csv([str(tmp_path / "bad.csv")], columns=("a",))
