"""`data.path` that is not a regular file or folder: said so, with the fix, not "does not exist"."""

from __future__ import annotations

import os

import pytest


def _data_path_problem(make_spec, spec_problems, path: str) -> str:
    (problem,) = [p for p in spec_problems(make_spec({"data.path": path})) if p.path == "data.path"]
    return problem.message


def test_a_fifo_is_not_a_data_file(make_spec, spec_problems, tmp_path):
    os.mkfifo(tmp_path / "stream.csv")

    message = _data_path_problem(make_spec, spec_problems, str(tmp_path / "stream.csv"))

    assert f"{tmp_path / 'stream.csv'} is a FIFO (named pipe), not a regular file or folder." in message
    assert "Write the data to a file and point `data.path` at it." in message


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_a_device_is_not_a_data_file(make_spec, spec_problems):
    message = _data_path_problem(make_spec, spec_problems, "/dev/zero")

    assert message.startswith("/dev/zero is a character device, not a regular file or folder.")


def test_a_broken_link_names_its_target(make_spec, spec_problems, tmp_path):
    os.symlink(tmp_path / "gone.csv", tmp_path / "link.csv")

    message = _data_path_problem(make_spec, spec_problems, str(tmp_path / "link.csv"))

    assert f"is a symbolic link to {tmp_path / 'gone.csv'}, which does not exist." in message


def test_a_missing_path_still_does_not_exist(make_spec, spec_problems, tmp_path):
    message = _data_path_problem(make_spec, spec_problems, str(tmp_path / "nothing.csv"))

    assert message.startswith(f"{tmp_path / 'nothing.csv'} does not exist.")
