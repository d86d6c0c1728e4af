"""Fixtures for the spec tests: a small taxi-like CSV and a spec writer.

`make_spec` writes a minimal valid spec next to the CSV; `overrides` set keys
by dotted path (`{"training.batch_size": "big"}`) or replace whole sections.
Leaf sections are written in flow style (`label: {name: ..., ...}`), so every
problem a test provokes sits on one line that `line_with` can find.
"""

from __future__ import annotations

import copy
import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipelines.load import load_spec
from pipelines.spec import SpecError, SpecProblem

CSV_HEADER = ["fare", "tips", "trip_miles", "company"]

MINIMAL_SPEC: dict[str, Any] = {
    "pipeline": {"name": "taxi_small"},
    "data": {"path": "taxi.csv"},
    "features": {
        "fare": {"transform": "zscore"},
        "trip_miles": {"transform": "zscore"},
        "company": {"transform": "vocabulary", "top_k": 10},
    },
    "label": {"name": "big_tipper", "expression": "tips > 0.2 * fare"},
    "training": {"train_steps": 10, "batch_size": 8},
    "evaluation": {"metrics": ["binary_accuracy", "auc"], "thresholds": {"binary_accuracy": {"min": 0.5}}},
}


def csv_rows(count: int = 30) -> list[list[str]]:
    """`count` deterministic rows matching `CSV_HEADER`."""
    companies = ["Flash Cab", "Taxi Affiliation Services", "Blue Ribbon"]
    return [
        [f"{5 + i * 0.75:.2f}", f"{(i % 4) * 0.9:.2f}", f"{0.5 + i * 0.3:.1f}", companies[i % 3]] for i in range(count)
    ]


def apply_overrides(spec: dict, overrides: dict[str, Any]) -> dict:
    """Sets the keys of `spec` named by dotted paths."""
    for dotted, value in overrides.items():
        *parents, last = dotted.split(".")
        node = spec
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return spec


@pytest.fixture
def write_csv(tmp_path: Path) -> Callable[..., Path]:
    """Writes tmp_path/<name>: `header` then `rows` (default: 30 taxi-like rows), or raw `text`."""

    def write(
        name: str, header: list[str] = CSV_HEADER, rows: list[list[str]] | None = None, text: str | None = None
    ) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            path.write_text(text, encoding="utf-8")
            return path
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(csv_rows() if rows is None else rows)
        return path

    return write


@pytest.fixture
def data_csv(write_csv) -> Path:
    """tmp_path/taxi.csv: 30 rows, numeric `fare`, `tips`, `trip_miles`, text `company`."""
    return write_csv("taxi.csv")


@pytest.fixture
def make_spec(tmp_path: Path, data_csv: Path) -> Callable[..., Path]:
    """Writes the minimal spec (with `overrides`) to tmp_path/<file_name>; returns its path."""

    def make(overrides: dict[str, Any] | None = None, file_name: str = "spec.yaml") -> Path:
        spec = apply_overrides(copy.deepcopy(MINIMAL_SPEC), overrides or {})
        path = tmp_path / file_name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(spec, sort_keys=False, default_flow_style=None), encoding="utf-8")
        return path

    return make


@pytest.fixture
def spec_problems(tmp_path: Path) -> Callable[[Path], list[SpecProblem]]:
    """Loads a spec that must be invalid; returns its problems."""

    def problems(path: Path) -> list[SpecProblem]:
        with pytest.raises(SpecError) as caught:
            load_spec(str(path), cwd=str(tmp_path))
        assert caught.value.problems, "SpecError raised without problems"
        return caught.value.problems

    return problems


@pytest.fixture
def line_with() -> Callable[[Path, str], int]:
    """The 1-based number of the one line of a file that contains `needle`."""

    def find(path: Path, needle: str) -> int:
        numbers = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line]
        assert len(numbers) == 1, f"{needle!r} is on lines {numbers} of {path}, expected exactly one"
        return numbers[0]

    return find
