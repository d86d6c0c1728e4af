"""Every module of the project stays small enough to read in one sitting: at most `MAX_LINES` lines.

A module past the limit is a sign that a theme wants its own module (`pipelines/spec/*_rules.py`
shows the pattern). The generated protos under `serving/protos/` are not ours to split.
"""

from __future__ import annotations

import os

import pytest
from taxi_fixtures import REPO

MAX_LINES = 400
PACKAGES = ("pipelines", "components", "serving", "compat")
GENERATED = (os.path.join("serving", "protos"),)


def modules_over(limit: int, root: str = REPO) -> list[tuple[str, int]]:
    """(path relative to `root`, line count) of every `.py` module in `PACKAGES` longer than `limit` lines."""
    found = []
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(root, package)):
            relative_folder = os.path.relpath(folder, root)
            if any(relative_folder == skip or relative_folder.startswith(skip + os.sep) for skip in GENERATED):
                continue
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    lines = sum(1 for _ in handle)
                if lines > limit:
                    found.append((os.path.relpath(path, root), lines))
    return sorted(found)


def test_no_module_is_longer_than_the_limit():
    too_long = modules_over(MAX_LINES)
    assert not too_long, (
        f"modules longer than {MAX_LINES} lines: "
        + ", ".join(f"{path} ({lines} lines)" for path, lines in too_long)
        + ". Split each by theme into modules of its package."
    )


def test_a_long_module_is_named_with_its_line_count(tmp_path):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "pipelines" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "components" / "short.py").write_text("x = 1\n" * MAX_LINES)
    protos = tmp_path / "serving" / "protos" / "tensorflow_serving"
    protos.mkdir(parents=True)
    (protos / "generated_pb2.py").write_text("x = 1\n" * (MAX_LINES * 3))
    assert modules_over(MAX_LINES, str(tmp_path)) == [(os.path.join("pipelines", "long.py"), MAX_LINES + 1)]


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_is_searched(package):
    assert os.path.isdir(os.path.join(REPO, package)), f"{package}/ is gone: update PACKAGES"
