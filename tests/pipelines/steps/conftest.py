"""A spec writer for step tests: the taxi sample spec plus `steps:`, and the line of a key in it."""

from __future__ import annotations

import pytest
from taxi_fixtures import taxi_spec, write_spec


@pytest.fixture
def steps_spec(tmp_path, taxi_sample_csv):
    """Returns write(steps, **sections) -> spec file path; the pipeline root is `tmp_path/root`."""

    def write(steps, **sections):
        spec = taxi_spec(taxi_sample_csv, str(tmp_path / "root"), steps=steps, **sections)
        spec["training"].update(train_steps=20, eval_steps=5)
        return write_spec(tmp_path / "spec.yaml", spec)

    return write


@pytest.fixture
def line_of():
    """line_of(spec_file, text): 1-based line of the first line containing `text` after `steps:`."""

    def find(spec_file: str, text: str, after: str = "steps:") -> int:
        lines = open(spec_file, encoding="utf-8").read().splitlines()
        start = next(i for i, line in enumerate(lines) if after in line)
        return next(i for i, line in enumerate(lines) if i >= start and text in line) + 1

    return find
