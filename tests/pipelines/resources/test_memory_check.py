"""Memory warnings before a local run: estimates from the data's size against declared and free memory."""

from __future__ import annotations

import gzip
import os
import re
import shutil

import psutil
import pytest
from taxi_fixtures import taxi_spec, write_spec

import pipelines
from pipelines.resources.memory_check import FACTORS, available_memory, data_bytes, estimate, memory_warnings

DATA_HEAVY = ["ExampleGen", "StatisticsGen", "Transform", "Trainer", "Evaluator"]
PIPELINE = ["ExampleGen", "StatisticsGen", "SchemaGen", "DropShortTrips", "Transform", "Trainer", "Evaluator", "Pusher"]
PLENTY = 2**50


def _resolved(tmp_path, data: str, components: dict | None = None):
    spec = taxi_spec(data, str(tmp_path / "run"))
    if components:
        spec["orchestrator"] = {"components": components}
    return pipelines.load(write_spec(tmp_path / "spec.yaml", spec))


def test_the_measured_factors_cover_the_data_heavy_components():
    assert sorted(FACTORS) == sorted(DATA_HEAVY)
    for component, (intercept_mib, slope) in FACTORS.items():
        assert intercept_mib > 100, component  # TensorFlow and TFX alone hold more: a real measurement
        assert slope >= 0, component


def test_the_estimate_grows_with_the_data_and_skips_custom_steps():
    small, large = estimate(PIPELINE, 10 * 2**20), estimate(PIPELINE, 1000 * 2**20)
    assert [e.component for e in small] == DATA_HEAVY  # SchemaGen, DropShortTrips, Pusher: not measured
    assert all(big.bytes >= little.bytes for little, big in zip(small, large))
    assert any(big.bytes > little.bytes for little, big in zip(small, large))


def test_a_declared_memory_below_the_estimate_is_reported_with_the_fix(tmp_path, taxi_sample_csv):
    resolved = _resolved(tmp_path, taxi_sample_csv, {"Trainer": {"memory": "1Mi"}, "Evaluator": {"memory": "64Gi"}})
    (warning,) = memory_warnings(resolved, PIPELINE, available=PLENTY)
    assert warning.startswith("Trainer needs about ")
    assert "more than its declared `orchestrator.components.Trainer.memory: 1Mi`" in warning
    raised = re.search(r"Raise it to at least `(\d+)Gi`, or run on a sample of the data\.$", warning)
    assert raised, warning
    (trainer,) = estimate(["Trainer"], data_bytes(resolved.data_files))
    assert 0 <= int(raised.group(1)) * 2**30 - trainer.bytes < 2**30  # the estimate, rounded up to whole Gi
    assert f" for {os.path.getsize(taxi_sample_csv) / 1024:.0f} KiB of data" in warning


def test_a_machine_without_enough_free_memory_is_reported_once_per_component(tmp_path, taxi_sample_csv):
    warnings = memory_warnings(_resolved(tmp_path, taxi_sample_csv), PIPELINE, available=2**20)
    assert [w.split(" ", 1)[0] for w in warnings] == DATA_HEAVY
    for warning in warnings:
        assert "more than the 1 MiB this machine has free. Run on a bigger machine" in warning
        assert "or on a sample of the data" in warning


def test_no_warning_when_the_data_fits(tmp_path, taxi_sample_csv):
    resolved = _resolved(tmp_path, taxi_sample_csv, {"Trainer": {"memory": "64Gi"}})
    assert memory_warnings(resolved, PIPELINE, available=PLENTY) == []


def test_gzip_data_counts_at_its_uncompressed_size(tmp_path, taxi_sample_csv):
    packed = tmp_path / "taxi.csv.gz"
    with open(taxi_sample_csv, "rb") as source, gzip.open(packed, "wb") as target:
        shutil.copyfileobj(source, target)
    assert data_bytes([str(packed)]) == data_bytes([taxi_sample_csv]) > packed.stat().st_size


@pytest.mark.parametrize(("limit", "bounded"), [(str(300 * 2**20), True), ("max", False)])
def test_the_cgroup_limit_bounds_the_free_memory(tmp_path, limit, bounded):
    (tmp_path / "memory.max").write_text(limit + "\n")
    (tmp_path / "memory.current").write_text(str(100 * 2**20) + "\n")
    found = available_memory(str(tmp_path))
    rss = psutil.Process().memory_info().rss
    if bounded:
        assert found - rss <= 200 * 2**20
    else:
        assert found - rss > 200 * 2**20  # this machine's free memory, unbounded by the cgroup


class _StopBeforeTheRun:
    def before_run(self, **_):
        raise RuntimeError("stopped before the first component")


def test_the_local_run_prints_the_warnings_before_it_starts(tmp_path, taxi_sample_csv, capsys):
    resolved = _resolved(tmp_path, taxi_sample_csv, {"Evaluator": {"memory": "1Mi"}})
    with pytest.raises(RuntimeError, match="stopped before the first component"):
        pipelines.run(resolved, hooks=[_StopBeforeTheRun()])
    lines = [line for line in capsys.readouterr().err.splitlines() if "needs about" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: Evaluator needs about "), lines
    assert "`orchestrator.components.Evaluator.memory: 1Mi`" in lines[0]
