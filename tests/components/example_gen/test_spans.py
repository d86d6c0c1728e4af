"""Listing spans of a data path with TFX's own matching (`{SPAN}`, widths, `{VERSION}`, the date spec)."""

from __future__ import annotations

import os

import pytest

from components.example_gen import spans
from components.example_gen.spans import Span, list_spans, missing_spans, split_span_path, static_range


def touch(root, *names: str) -> None:
    for name in names:
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("a,b\n1,2\n")


def test_spans_are_listed_oldest_first_with_their_files(tmp_path):
    touch(tmp_path, "span-3/a.csv", "span-3/b.csv", "span-10/a.csv", "span-1/a.csv", "other/a.csv")

    listed = list_spans(str(tmp_path / "span-{SPAN}" / "*.csv"))

    assert [(s.number, s.label, len(s.files)) for s in listed] == [(1, "1", 1), (3, "3", 2), (10, "10", 1)]
    assert listed[1].files == (str(tmp_path / "span-3/a.csv"), str(tmp_path / "span-3/b.csv"))
    assert missing_spans(listed) == [2, 4, 5, 6, 7, 8, 9]


def test_a_width_modifier_reads_zero_padded_spans(tmp_path):
    touch(tmp_path, "day-01.csv", "day-02.csv", "day-11.csv")

    listed = list_spans(str(tmp_path / "day-{SPAN:2}.csv"))

    assert [(s.number, s.label) for s in listed] == [(1, "01"), (2, "02"), (11, "11")]


def test_a_name_of_another_width_is_an_error_naming_the_file(tmp_path):
    touch(tmp_path, "day-01.csv", "day-3.csv")

    with pytest.raises(ValueError, match=r"day-3\.csv: Glob pattern does not match regex pattern"):
        list_spans(str(tmp_path / "day-{SPAN:2}.csv"))


def test_the_newest_version_of_each_span_wins(tmp_path):
    touch(tmp_path, "s1/v1/a.csv", "s1/v2/a.csv", "s1/v2/b.csv", "s2/v1/a.csv")

    listed = list_spans(str(tmp_path / "s{SPAN}" / "v{VERSION}" / "*.csv"))

    assert [(s.number, s.version, len(s.files)) for s in listed] == [(1, 2, 2), (2, 1, 1)]
    assert all("/v2/" in path for path in listed[0].files)
    assert listed[0].describe() == "span 1 (version 2)"


def test_the_date_spec_makes_days_since_1970(tmp_path):
    touch(tmp_path, "2016-01-01/a.csv", "2016-01-03/a.csv")

    listed = list_spans(str(tmp_path / "{YYYY}-{MM}-{DD}" / "*.csv"))

    assert [(s.number, s.label) for s in listed] == [(16801, "2016-01-01"), (16803, "2016-01-03")]
    assert missing_spans(listed) == [16802]


def test_hidden_files_are_skipped_and_a_span_with_only_those_is_not_listed(tmp_path):
    touch(tmp_path, "span-1/a.csv", "span-2/.DS_Store")

    assert [s.number for s in list_spans(str(tmp_path / "span-{SPAN}" / "*"))] == [1]


@pytest.mark.parametrize(
    "pattern",
    ["span-{SPAN}/{SPAN}.csv", "v{VERSION}/*.csv", "span-{SPAN:0}/*.csv"],
    ids=["span-twice", "version-without-span", "zero-width"],
)
def test_patterns_tfx_refuses_raise_its_error(tmp_path, pattern):
    touch(tmp_path, "span-1/1.csv", "v1/a.csv", "span-1/a.csv")

    with pytest.raises(ValueError):
        list_spans(str(tmp_path / pattern))


def test_a_path_splits_into_input_base_and_pattern_at_the_first_placeholder():
    assert split_span_path("/data/exports/{YYYY}-{MM}/{DD}/*.csv") == ("/data/exports", "{YYYY}-{MM}/{DD}/*.csv")
    assert split_span_path("/data/span-{SPAN}.csv") == ("/data", "span-{SPAN}.csv")
    assert spans.has_span_spec("/data/span-{SPAN:3}.csv")
    assert not spans.has_span_spec("/data/{name}.csv")


def test_a_static_range_names_exactly_one_span():
    config = static_range(7)

    assert (config.static_range.start_span_number, config.static_range.end_span_number) == (7, 7)


def test_a_differing_tfx_falls_back_to_the_newest_span_only(tmp_path, monkeypatch):
    from compat.tfx import spans as tfx_spans

    touch(tmp_path, "span-1/a.csv", "span-2/a.csv")
    monkeypatch.setattr(tfx_spans, "fits", lambda: False)

    assert list_spans(str(tmp_path / "span-{SPAN}" / "*.csv")) == [
        Span(2, None, (str(tmp_path / "span-2/a.csv"),), "2")
    ]
