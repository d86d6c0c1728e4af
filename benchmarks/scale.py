"""Stock TFX's taxi example against our bundled spec at 1x, 10x and 100x the taxi data, side by side.

The taxi CSV (15k rows) is written `scale` times into one file with
`trip_seconds` jittered (+-10%, a fixed seed: the same bytes every time, no
download). For each size, stock TFX's native-Keras taxi example (LocalDagRunner)
and ours (`pipelines/run_local.py` on chicago_taxi.yaml) run in fresh processes
on the same file with the same train steps. Reported per size: wall time, peak
RSS of the whole process tree (sampled every 0.2 s: Beam worker processes
count), each component's time from ML Metadata, and ours/stock.

    .venv/bin/python benchmarks/scale.py [--sizes 1 10 100] [--only ours|stock] [--set KEY=VALUE ...] [--cpus N]
    .venv/bin/python benchmarks/scale.py --sizes 1 --slice-cost --rounds 2

`--slice-cost` measures what `evaluation.slices` costs: ours runs once
without slices to fill the cache, then each round runs only the Evaluator
again (the rest cached), as shipped (two slice specs, a per-slice gate) and
without slices, in that order, each in a fresh process; it prints both
Evaluator times and their ratio per round (target, issue 35: <= 1.5x at x100).
The first Evaluator of a fresh root ran in the process that had just trained
the model and took about twice as long, so it is never one of those timed.

`--cpus 1` runs both sides on one core (ours then keeps Beam in process: its
worker count follows the usable cores).

Targets (issue 14): ours <= 0.35x stock at every size; peak RSS at 100x <= 2 GB.
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_vs_tfx import EXAMPLE_DIR, REPO, STOCK_DRIVER  # noqa: E402

TAXI_CSV = os.path.join(EXAMPLE_DIR, "data", "simple", "data.csv")
JITTER = 0.10


def write_scaled_csv(path: str, scale: int, seed: int = 0) -> int:
    """Writes the taxi CSV `scale` times into `path` (trip_seconds jittered after the first copy); returns rows."""
    with open(TAXI_CSV, newline="", encoding="utf-8") as source:
        reader = csv.reader(source)
        header = next(reader)
        rows = list(reader)
    column = header.index("trip_seconds")
    rng = random.Random(seed)
    written = 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as target:
        writer = csv.writer(target)
        writer.writerow(header)
        for copy in range(scale):
            for row in rows:
                if copy and row[column]:
                    row = list(row)
                    row[column] = str(max(0, round(int(row[column]) * (1 + rng.uniform(-JITTER, JITTER)))))
                writer.writerow(row)
                written += 1
    return written


class TreeRssSampler:
    """Samples the summed RSS of a process and all its descendants; `.peak_gb` after `stop()`."""

    def __init__(self, pid: int, interval: float = 0.2):
        self._root = psutil.Process(pid)
        self._interval = interval
        self._stop = threading.Event()
        self.peak_bytes = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            try:
                processes = [self._root, *self._root.children(recursive=True)]
            except psutil.Error:
                processes = []
            for process in processes:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    pass
            self.peak_bytes = max(self.peak_bytes, total)
            self._stop.wait(self._interval)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_bytes / 2**30


def timed_tree(command: list[str], log_path: str) -> tuple[float, float]:
    """Runs `command`; returns (seconds, peak RSS in GB of its process tree)."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    started = time.perf_counter()
    with open(log_path, "a") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        sampler = TreeRssSampler(process.pid)
        code = process.wait()
        peak = sampler.stop()
    seconds = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"{' '.join(command)} failed (exit {code}); see {log_path}")
    return seconds, peak


def component_seconds(metadata_path: str) -> dict[str, float]:
    """Each node's execution time in ML Metadata (create to last update of its newest execution)."""
    from pipelines.outcome.metadata_file import open_metadata

    store = open_metadata(metadata_path)
    seconds: dict[str, float] = {}
    for context in store.get_contexts_by_type("node"):
        node = context.name.rsplit(".", 1)[-1]
        executions = store.get_executions_by_context(context.id)
        if executions:
            newest = max(executions, key=lambda e: e.create_time_since_epoch)
            seconds[node] = (newest.last_update_time_since_epoch - newest.create_time_since_epoch) / 1000
    return seconds


def run_stock(root: str, data_dir: str, log: str) -> dict:
    driver = os.path.join(root, "stock_driver.py")
    text = STOCK_DRIVER.replace(
        'data_root=os.path.join(example.__file__.rsplit("/", 1)[0], "data", "simple")', "data_root=sys.argv[2]"
    )
    assert "sys.argv[2]" in text, "the stock driver's data_root line changed"
    with open(driver, "w") as handle:
        handle.write(text)
    seconds, rss = timed_tree([sys.executable, driver, root, data_dir], log)
    return {"seconds": seconds, "rss_gb": rss, "components": component_seconds(os.path.join(root, "metadata.db"))}


def with_settings(spec: dict, settings: list[str]) -> dict:
    """`spec` with each `section.key=value` (value read as YAML) set, e.g. `evaluation.sample_rows=20000`."""
    for setting in settings:
        path, _, value = setting.partition("=")
        *sections, key = path.split(".")
        target = spec
        for section in sections:
            target = target.setdefault(section, {})
        target[key] = yaml.safe_load(value)
    return spec


def run_ours(root: str, data_dir: str, log: str, settings: list[str] = ()) -> dict:
    with open(os.path.join(REPO, "pipelines", "examples", "chicago_taxi.yaml")) as handle:
        spec = with_settings(yaml.safe_load(handle), list(settings))
    spec["pipeline"]["root"] = os.path.join(root, "run")
    spec["data"]["path"] = os.path.join(data_dir, "data.csv")
    spec_file = os.path.join(root, "spec.yaml")
    with open(spec_file, "w") as handle:
        yaml.safe_dump(spec, handle)
    seconds, rss = timed_tree([sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file], log)
    metadata = os.path.join(root, "run", "metadata.sqlite")  # ResolvedSpec.metadata_path
    return {"seconds": seconds, "rss_gb": rss, "components": component_seconds(metadata)}


NO_SLICES = ("evaluation.slices=[]", "evaluation.thresholds.binary_accuracy.per_slice=false")


def _rerun_evaluator(run: int) -> str:
    """A setting that makes the Evaluator run again and changes nothing it computes: its gate's minimum, 1e-9 lower."""
    return f"evaluation.thresholds.binary_accuracy.min={0.6 - run * 1e-9!r}"


def slice_cost(root: str, data_dir: str, log: str, settings: list[str], rounds: int) -> list[tuple[float, float]]:
    """Per round, the Evaluator's seconds with the example's slices and without them (the rest cached, module doc)."""
    run_ours(root, data_dir, log, [*settings, *NO_SLICES])  # fills the cache; its Evaluator is not timed
    results = []
    for round_ in range(rounds):
        with_slices = run_ours(root, data_dir, log, [*settings, _rerun_evaluator(2 * round_ + 1)])
        without = run_ours(root, data_dir, log, [*settings, *NO_SLICES, _rerun_evaluator(2 * round_ + 2)])
        results.append((with_slices["components"]["Evaluator"], without["components"]["Evaluator"]))
    return results


def _row(name: str, result: dict) -> str:
    parts = ", ".join(f"{k} {v:.0f}" for k, v in sorted(result["components"].items(), key=lambda kv: -kv[1]))
    return f"  {name:<6} {result['seconds']:7.1f} s  peak RSS {result['rss_gb']:.2f} GB  [{parts}]"


def limit_cpus(cpus: int | None) -> int:
    """Keeps this process, and every process it starts, on its first `cpus` cores; returns the cores usable."""
    if cpus:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cpus])
    return len(os.sched_getaffinity(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100], help="copies of the taxi data")
    parser.add_argument("--only", choices=("ours", "stock"), default=None, help="run one side only")
    parser.add_argument("--workdir", default=None, help="keep data and roots here (default: a temp folder, removed)")
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting of our spec, e.g. evaluation.sample_rows=20000 or data.checks.sample_rate=0.1 (repeatable)",
    )
    parser.add_argument(
        "--slice-cost",
        action="store_true",
        help="only ours: the Evaluator's time with the example's two slice specs against none (see above)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="with --slice-cost: rounds of both Evaluator runs")
    parser.add_argument(
        "--cpus",
        type=int,
        default=None,
        help="run both sides on the first N cores only (CPU affinity, inherited by every process they start)",
    )
    args = parser.parse_args()
    cpus = limit_cpus(args.cpus)
    workdir = args.workdir or tempfile.mkdtemp(prefix="bench_scale_")
    log = os.path.join(workdir, "bench.log")
    print(f"logs: {log}; cpus: {cpus} of {os.cpu_count()}; our settings: {args.settings or 'as shipped'}", flush=True)
    summary = []
    for scale in args.sizes:
        data_dir = os.path.join(workdir, f"data-x{scale}")
        rows = write_scaled_csv(os.path.join(data_dir, "data.csv"), scale)
        size_mb = os.path.getsize(os.path.join(data_dir, "data.csv")) / 2**20
        print(f"\nx{scale}: {rows:,} rows, {size_mb:.0f} MB", flush=True)
        if args.slice_cost:
            root = os.path.join(workdir, f"slices-x{scale}")
            os.makedirs(root, exist_ok=True)
            for round_, (with_slices, without) in enumerate(
                slice_cost(root, data_dir, log, args.settings, args.rounds)
            ):
                print(
                    f"  round {round_ + 1}: Evaluator {with_slices:.1f} s with two slice specs, {without:.1f} s without: "
                    f"{with_slices / without:.2f}x (target <= 1.5x)",
                    flush=True,
                )
            continue
        results = {}
        ours = functools.partial(run_ours, settings=args.settings)
        for name, runner in (("stock", run_stock), ("ours", ours)):
            if args.only and args.only != name:
                continue
            root = os.path.join(workdir, f"{name}-x{scale}")
            os.makedirs(root, exist_ok=True)
            results[name] = runner(root, data_dir, log)
            print(_row(name, results[name]), flush=True)
            if not args.workdir:
                shutil.rmtree(root, ignore_errors=True)
        ratio = results["ours"]["seconds"] / results["stock"]["seconds"] if len(results) == 2 else None
        if ratio is not None:
            print(f"  ours/stock: {ratio:.2f}x (target <= 0.35x)", flush=True)
        summary.append((scale, rows, results, ratio))
        if not args.workdir:
            shutil.rmtree(data_dir, ignore_errors=True)
    print("\n| rows | stock (s, GB) | ours (s, GB) | ours/stock |")
    print("|---|---|---|---|")
    for scale, rows, results, ratio in summary:
        cells = [
            f"{results[n]['seconds']:.0f} s, {results[n]['rss_gb']:.2f} GB" if n in results else "-"
            for n in ("stock", "ours")
        ]
        print(f"| {rows:,} (x{scale}) | {cells[0]} | {cells[1]} | {f'{ratio:.2f}x' if ratio else '-'} |")
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
