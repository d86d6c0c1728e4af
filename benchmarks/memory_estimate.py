"""Peak memory of each component of the taxi pipeline at 1x and 10x the rows, and the linear fit per component.

Each size runs the bundled chicago_taxi spec (`pipelines.api.run`, the local
runner) in a fresh process on the taxi CSV written `scale` times
(`benchmarks/scale.py`'s deterministic, jittered copies). A lifecycle hook
samples the RSS of that process and its children every 0.1 s and keeps, per
component, the peak while it ran. From two sizes, per component:
`peak = intercept + slope x CSV bytes`, the factors
`pipelines/resources/memory_check.py` uses (paste the printed `FACTORS`).

    .venv/bin/python benchmarks/memory_estimate.py [--sizes 1 10] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import psutil
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import REPO, write_scaled_csv  # noqa: E402

DATA_HEAVY = ("ExampleGen", "StatisticsGen", "Transform", "Trainer", "Evaluator")


class ComponentRss:
    """A lifecycle hook: the peak RSS (bytes) of this process tree while each component ran."""

    def __init__(self, interval: float = 0.1):
        self._process = psutil.Process()
        self._interval = interval
        self._current: str | None = None
        self._lock = threading.Lock()
        self.peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _rss(self) -> int:
        total = 0
        for process in [self._process, *self._process.children(recursive=True)]:
            try:
                total += process.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _sample(self) -> None:
        while not self._stop.wait(self._interval):
            rss = self._rss()
            with self._lock:
                if self._current is not None:
                    self.peaks[self._current] = max(self.peaks.get(self._current, 0), rss)

    def before_component(self, *, component_id: str, **_) -> None:
        with self._lock:
            self._current = component_id
            self.peaks[component_id] = self._rss()

    def after_component(self, *, component_id: str, **_) -> None:
        with self._lock:
            self.peaks[component_id] = max(self.peaks.get(component_id, 0), self._rss())
            self._current = None

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def _run_one(spec_file: str, out_file: str) -> None:
    """In this (fresh) process: runs the spec and writes {component: peak RSS bytes} to `out_file`."""
    sys.path.insert(0, REPO)
    import pipelines

    hook = ComponentRss()
    try:
        pipelines.run(pipelines.load(spec_file), force=True, hooks=[hook])
    finally:
        hook.close()
    with open(out_file, "w", encoding="utf-8") as handle:
        json.dump(hook.peaks, handle)


def measure(workdir: str, scale: int) -> tuple[int, int, dict[str, int]]:
    """(rows, CSV bytes, {component: peak RSS bytes}) of one run at `scale` x the taxi data."""
    data = os.path.join(workdir, f"x{scale}", "data.csv")
    rows = write_scaled_csv(data, scale)
    with open(os.path.join(REPO, "pipelines", "examples", "chicago_taxi.yaml"), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    spec["pipeline"]["root"] = os.path.join(workdir, f"x{scale}", "root")
    spec["data"]["path"] = data
    spec_file = os.path.join(workdir, f"x{scale}", "spec.yaml")
    with open(spec_file, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle)
    out = os.path.join(workdir, f"x{scale}", "peaks.json")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    with open(os.path.join(workdir, "bench.log"), "a", encoding="utf-8") as log:
        subprocess.run(
            [sys.executable, __file__, "--one", spec_file, out], check=True, cwd=REPO, env=env, stdout=log, stderr=log
        )
    with open(out, encoding="utf-8") as handle:
        return rows, os.path.getsize(data), json.load(handle)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs=2, default=[1, 10], help="two multiples of the taxi data")
    parser.add_argument("--workdir", default=None, help="keep data and roots here (default: a temp folder, removed)")
    parser.add_argument("--one", nargs=2, metavar=("SPEC", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _run_one(*args.one)
        return
    workdir = args.workdir or tempfile.mkdtemp(prefix="bench_memory_")
    results = [measure(workdir, scale) for scale in args.sizes]
    mib = 2**20
    print("| component | " + " | ".join(f"{rows:,} rows ({size / mib:.1f} MiB)" for rows, size, _ in results) + " |")
    print("|---|" + "---|" * len(results))
    (_, small, low), (_, large, high) = results
    factors = {}
    for component in DATA_HEAVY:
        print(f"| {component} | " + " | ".join(f"{peaks[component] / mib:,.0f} MiB" for _, _, peaks in results) + " |")
        slope = max(0.0, (high[component] - low[component]) / (large - small))
        factors[component] = (round((low[component] - slope * small) / mib), round(slope, 1))
    print("\nFACTORS = {component: (intercept MiB, bytes of memory per byte of CSV)}:")
    print(factors)
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
