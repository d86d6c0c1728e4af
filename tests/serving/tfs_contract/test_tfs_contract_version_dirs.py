"""Version folders are found as TF Serving finds them: names parsed as integers.

TF Serving's file_system_storage_path_source.cc parses each child of the base
path with SimpleAtoi (`00000123` is version 123, loaded from `00000123/`; `+7`
and `-7` are 7 and -7) and,
of two folders with one number, loads one and logs that the other is ignored.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from serving.server.lifecycle.versions import versions_on_disk


def _version_dir(base: Path, name: str, model_file: str | None = "saved_model.pb") -> Path:
    path = base / name
    path.mkdir(parents=True)
    if model_file:
        (path / model_file).write_bytes(b"")
    return path


@pytest.mark.parametrize(
    "folders, expected",
    [
        ([("00000123", "saved_model.pb")], {123: "00000123"}),
        ([("7", "saved_model.pb"), ("00000124", "saved_model.pbtxt")], {7: "7", 124: "00000124"}),
        ([("00000123", "export.meta")], {123: "00000123"}),  # a SessionBundle: tried, and fails visibly
        ([("123", None)], {}),  # not there yet (a copy in progress)
        ([(".tmp-5", "saved_model.pb"), ("12a", "saved_model.pb"), ("0x7", "saved_model.pb")], {}),
        # absl::SimpleAtoi: a sign, and ASCII whitespace around the digits.
        (
            [("-3", "saved_model.pb"), ("+123", "saved_model.pb"), (" 8\n", "saved_model.pb")],
            {-3: "-3", 123: "+123", 8: " 8\n"},
        ),
        ([("9" * 19, "saved_model.pb"), ("-" + "9" * 19, "saved_model.pb")], {}),  # beyond int64
    ],
    ids=[
        "zero_padded",
        "plain_and_padded",
        "session_bundle",
        "empty",
        "not_numbers",
        "signed_and_spaced",
        "over_int64",
    ],
)
def test_version_folders_are_parsed_as_integers(tmp_path, folders, expected):
    for name, model_file in folders:
        _version_dir(tmp_path, name, model_file)
    assert versions_on_disk(str(tmp_path)) == {v: tmp_path / name for v, name in expected.items()}


def test_duplicate_version_numbers_use_one_folder_and_say_which(tmp_path, caplog):
    _version_dir(tmp_path, "123")
    _version_dir(tmp_path, "00000123")
    with caplog.at_level(logging.WARNING, logger="serving.server.lifecycle"):
        assert versions_on_disk(str(tmp_path)) == {123: tmp_path / "00000123"}
    assert "Duplicate version directories detected. Version 123 will be loaded from" in caplog.text
    assert f"{tmp_path / '123'} will be ignored" in caplog.text


def test_missing_base_path_has_no_versions(tmp_path):
    assert versions_on_disk(str(tmp_path / "absent")) == {}


def test_a_file_named_like_a_version_is_a_version(tmp_path):
    """TF Serving's poll lists children with GetChildren, not asking whether they are folders, and aspires
    every name SimpleAtoi reads; the load then fails (`Servable.load`'s NOT_FOUND)."""
    (tmp_path / "9").write_text("not a model")
    (tmp_path / "8").mkdir()  # an empty folder: a copy not started yet, not a version
    assert versions_on_disk(str(tmp_path)) == {9: tmp_path / "9"}
