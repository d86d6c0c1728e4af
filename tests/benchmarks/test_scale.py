"""The scale benchmark's own parts: the scaled data and the process-tree memory sampler."""

from __future__ import annotations

import csv
import subprocess
import sys

from benchmarks import scale as bench


def _read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_scaled_csv_repeats_the_rows_with_jittered_trip_seconds_and_is_deterministic(tmp_path):
    first, second = tmp_path / "a" / "data.csv", tmp_path / "b" / "data.csv"
    rows = bench.write_scaled_csv(str(first), 3, seed=7)
    bench.write_scaled_csv(str(second), 3, seed=7)
    original = _read(bench.TAXI_CSV)
    scaled = _read(str(first))
    assert rows == 3 * (len(original) - 1) == len(scaled) - 1
    assert first.read_bytes() == second.read_bytes()
    column = original[0].index("trip_seconds")
    n = len(original) - 1
    assert scaled[1 : n + 1] == original[1:]  # the first copy is the data as it is
    changed = 0
    for before, after in zip(original[1:], scaled[n + 1 : 2 * n + 1]):
        assert before[:column] + before[column + 1 :] == after[:column] + after[column + 1 :]
        if before[column]:
            old, new = int(before[column]), int(after[column])
            assert abs(new - old) <= bench.JITTER * old + 1
            changed += new != old
    assert changed > n // 2


def test_tree_sampler_counts_the_memory_of_child_processes():
    code = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'b = bytearray(300 * 2**20); import time; time.sleep(1.5)'])"
    process = subprocess.Popen([sys.executable, "-c", code])
    sampler = bench.TreeRssSampler(process.pid, interval=0.05)
    process.wait()
    assert sampler.stop() > 0.29  # the grandchild's 300 MiB, which ru_maxrss of the child would not show


def test_settings_are_set_in_our_spec_as_yaml_values():
    spec = {"evaluation": {"metrics": ["auc"]}}
    bench.with_settings(spec, ["evaluation.sample_rows=20000", "data.checks.sample_rate=0.1"])
    assert spec == {
        "evaluation": {"metrics": ["auc"], "sample_rows": 20000},
        "data": {"checks": {"sample_rate": 0.1}},
    }


def test_cpus_limit_reaches_the_processes_the_benchmark_starts():
    script = (
        "import subprocess, sys; from benchmarks import scale; print(scale.limit_cpus(1)); "
        "print(subprocess.run([sys.executable, '-c', 'import os; print(len(os.sched_getaffinity(0)))'], "
        "capture_output=True, text=True).stdout.strip())"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["1", "1"]
