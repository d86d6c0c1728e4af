"""The CLI as a person meets it: hostile files end fast with one line, unexpected errors never print a
traceback, and user modules beside the spec import the same way for every command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from taxi_fixtures import REPO

from pipelines import cli

ENV = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONDONTWRITEBYTECODE="1")


def _python(*args: str, cwd: str) -> subprocess.CompletedProcess:
    env = dict(ENV, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _bomb(levels: int = 12) -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("alias-bomb", _bomb().encode(), "the spec expands to more than 100,000 values"),
        ("fifty-megabyte-list", b"rows:\n" + b"- 1\n" * 13_107_200, "the spec file is 52,428,806 bytes"),
        ("unclosed-brackets", b"pipeline: " + b"[" * 500_000, "the YAML nests deeper than 32 levels"),
        ("binary", bytes(range(256)) * 64, "this is a binary file (a NUL byte at byte offset 0)"),
    ],
)
def test_hostile_file_ends_with_one_error_line_and_exit_2(tmp_path, name, content, expected):
    spec_file = tmp_path / f"{name}.yaml"
    spec_file.write_bytes(content)

    result = _python("-m", "pipelines", "validate", str(spec_file), cwd=str(tmp_path))

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and expected in errors[0], result.stderr
    assert sorted(os.listdir(tmp_path)) == [spec_file.name]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


def test_unexpected_error_while_checking_is_one_line_exit_2_with_the_traceback_in_a_file(
    in_tmp, make_spec, monkeypatch, capsys
):
    # A bug cannot be provoked on purpose: stand one in for the loader.
    def broken(path, **kwargs):
        raise KeyError("frobnicate")

    monkeypatch.setattr("pipelines.api.load", broken)
    spec_file = make_spec()

    code = cli.main(["validate", str(spec_file)])

    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    [line] = err.splitlines()
    assert line.startswith(
        "error: checking the spec stopped on an unexpected KeyError: 'frobnicate'. The traceback is in "
    )
    log = line.split("The traceback is in ")[1].split(";")[0]
    try:
        text = Path(log).read_text(encoding="utf-8")
        assert "Traceback (most recent call last)" in text and "KeyError: 'frobnicate'" in text
    finally:
        os.remove(log)


def test_unexpected_error_during_a_run_is_one_line_exit_1_with_the_traceback_in_the_run_logs(
    in_tmp, make_spec, monkeypatch, capsys
):
    def broken(resolved, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pipelines.api.run", broken)
    spec_file = make_spec({"pipeline.root": "root"})

    code = cli.main(["run", str(spec_file)])

    err = capsys.readouterr().err
    assert code == 1
    [line] = err.splitlines()
    assert line.startswith("error: the run stopped on an unexpected OSError: [Errno 28] No space left on device.")
    [log] = list((in_tmp / "root" / "logs").glob("error-*.log"))
    assert f"The traceback is in {log};" in line
    assert "OSError: [Errno 28] No space left on device" in log.read_text(encoding="utf-8")


USER_MODULE = """
import tensorflow as tf


def build(feature_specs, label, config):
    return tf.keras.Sequential([tf.keras.layers.Dense(1)])
"""


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["pipelines/run_local.py"], id="run_local.py"),
        pytest.param(["-m", "pipelines", "run"], id="python -m pipelines run"),
        pytest.param(["-m", "pipelines", "validate"], id="python -m pipelines validate"),
    ],
)
def test_user_module_beside_the_spec_imports_for_every_command(tmp_path, make_spec, command):
    (tmp_path / "beside_spec_model.py").write_text(USER_MODULE, encoding="utf-8")
    # A bad pipeline name stops every command in the same pass of rules as the module check, before anything runs.
    spec_file = make_spec({"model": {"build_model": "beside_spec_model:build"}, "pipeline.name": "9 lives"})
    script = [os.path.join(REPO, command[0]), *command[1:]] if command[0].endswith(".py") else command

    result = _python(*script, str(spec_file), cwd=REPO)

    assert result.returncode == 2, result.stderr
    assert "cannot be imported" not in result.stderr
    assert "pipeline.name: `9 lives` is not a usable name" in result.stderr
