"""Which files a data path holds: the listing `validate` and ExampleGen share."""

from __future__ import annotations

import gzip
import os

from components.common.data_files import data_files, keep_data_files, open_text


def test_hidden_files_and_sub_folders_are_not_data(tmp_path):
    (tmp_path / "b.csv").write_text("a\n1\n")
    (tmp_path / "a.csv.gz").write_bytes(gzip.compress(b"a\n1\n"))
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1\x00")
    (tmp_path / "._b.csv").write_bytes(b"\x00\x05\x16\x07")
    (tmp_path / "sub").mkdir()
    assert data_files(str(tmp_path)) == [str(tmp_path / "a.csv.gz"), str(tmp_path / "b.csv")]


def test_a_file_is_its_own_listing_and_nothing_lists_nothing(tmp_path):
    (tmp_path / "data.csv").write_text("a\n1\n")
    assert data_files(str(tmp_path / "data.csv")) == [str(tmp_path / "data.csv")]
    assert data_files(str(tmp_path / "absent.csv")) == []


def test_a_pattern_match_is_filtered_the_same_way(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("z.csv", ".DS_Store", "a.csv"):
        (tmp_path / name).write_text("a\n1\n")
    os.mkfifo(tmp_path / "pipe.csv")
    matched = [str(tmp_path / name) for name in ("z.csv", ".DS_Store", "sub", "pipe.csv", "a.csv")]
    assert keep_data_files(matched) == [str(tmp_path / "a.csv"), str(tmp_path / "z.csv")]


def test_open_text_decompresses_gzip_and_drops_the_byte_order_mark(tmp_path):
    (tmp_path / "data.csv.gz").write_bytes(gzip.compress("\ufeffa,b\n1,2\n".encode()))
    with open_text(str(tmp_path / "data.csv.gz")) as handle:
        assert handle.read() == "a,b\n1,2\n"
