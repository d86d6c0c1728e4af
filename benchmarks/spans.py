"""What a scheduled run costs when one new span arrives, against a first run on the same window of spans.

The taxi CSV is written `--scale` times (`scale.py`'s jittered copies, the same bytes every time, no
download) and cut into `--spans` spans of whole copies, `span-<N>/data.csv`. Our pipeline
(`pipelines/examples/taxi_spans.yaml`'s spec, `data.window` = `--window`) then runs twice on one root, each
in a fresh process: (a) the first run, on spans 1..window (every span ingested, the newest trained on),
then (b) the run after span window+1 arrives (only that span is ingested and its statistics computed;
Transform and the Trainer read the newest `window` spans; Transform reads the analysis of the older spans
from the first run's analyzer cache, and the Trainer, warm-started from the first run's blessed model,
trains `--warm-start-steps` steps). Printed: wall time and peak RSS of each run's
process tree (sampled every 0.2 s), each component's seconds from ML Metadata (b's own executions; a's
summed over its ingest passes), and b/a against the target.

    .venv/bin/python benchmarks/spans.py [--scale 100] [--spans 10] [--window 3] [--warm-start-steps N]
        [--set KEY=VALUE ...]

Target (issue 34): b <= 0.4x a at --scale 100, peak RSS of b no more than a's.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import REPO, limit_cpus, timed_tree, with_settings, write_scaled_csv  # noqa: E402

from pipelines.outcome.fingerprint import max_execution_id  # noqa: E402
from pipelines.outcome.metadata_file import open_metadata  # noqa: E402

TARGET = 0.4


def cut_into_spans(source: str, data_dir: str, spans: int, copies: int) -> list[str]:
    """Cuts `source` (a CSV with a header, `copies` copies of the taxi rows one after the other) into `spans`
    files of whole copies each, `data_dir/span-<N>/data.csv` (N from 1); returns their paths, oldest first.

    Whole copies keep every span distributed like the taxi data: rows dealt otherwise drift apart beyond
    the example's `data.checks.drift` (TFDV's approximate Jensen-Shannon divergence follows a span's
    outliers) or leave a missing-value pattern in one split only.
    """
    with open(source, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = list(reader)
    per_span = len(rows) // copies * (copies // spans)
    paths = []
    for number in range(1, spans + 1):
        path = os.path.join(data_dir, f"span-{number}", "data.csv")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8") as target:
            writer = csv.writer(target)
            writer.writerow(header)
            writer.writerows(rows[(number - 1) * per_span : number * per_span])
        paths.append(path)
    return paths


def execution_seconds(metadata_path: str, after_id: int) -> dict[str, float]:
    """Node -> seconds of its executions with id > `after_id` (create to last update), summed per node."""
    store = open_metadata(metadata_path)
    seconds: dict[str, float] = {}
    for context in store.get_contexts_by_type("node"):
        node = context.name.rsplit(".", 1)[-1]
        for execution in store.get_executions_by_context(context.id):
            if execution.id > after_id:
                spent = (execution.last_update_time_since_epoch - execution.create_time_since_epoch) / 1000
                seconds[node] = seconds.get(node, 0.0) + spent
    return seconds


def write_spec(root: str, data_dir: str, window: int, warm_start_steps: int | None, settings: list[str]) -> str:
    """The example's spec with its root under `root`, its spans in `data_dir`, `data.window: window`, and
    `training.warm_start` with `warm_start_steps` (None: train_steps / 4; 0: no warm start)."""
    with open(os.path.join(REPO, "pipelines", "examples", "taxi_spans.yaml"), encoding="utf-8") as handle:
        spec = with_settings(yaml.safe_load(handle), list(settings))
    if warm_start_steps != 0:  # `--set training.warm_start_steps=N` wins
        training = spec["training"]
        training.setdefault("warm_start", True)
        training.setdefault("warm_start_steps", warm_start_steps or max(1, training["train_steps"] // 4))
    spec["pipeline"]["root"] = os.path.join(root, "run")
    spec["data"]["path"] = os.path.join(data_dir, "span-{SPAN}", "data.csv")
    spec["data"]["window"] = window
    spec_file = os.path.join(root, "spec.yaml")
    with open(spec_file, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle, sort_keys=False)
    return spec_file


def timed_run(spec_file: str, metadata: str, log: str) -> dict:
    """One CLI run of `spec_file` in a fresh process: seconds, peak RSS (GB) and its executions' seconds."""
    before = max_execution_id(metadata)
    seconds, rss = timed_tree([sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file], log)
    return {"seconds": seconds, "rss_gb": rss, "components": execution_seconds(metadata, before)}


def _row(name: str, result: dict) -> str:
    parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(result["components"].items(), key=lambda kv: -kv[1]))
    return f"  {name:<28} {result['seconds']:7.1f} s  peak RSS {result['rss_gb']:.2f} GB  [{parts}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=100, help="copies of the taxi data (default: %(default)s)")
    parser.add_argument("--spans", type=int, default=10, help="spans the rows are cut into (default: %(default)s)")
    parser.add_argument("--window", type=int, default=3, help="data.window, and the spans of the first run")
    parser.add_argument(
        "--warm-start-steps",
        type=int,
        default=None,
        help="training.warm_start_steps of the runs (default: train_steps / 4; 0: no warm start, as shipped)",
    )
    parser.add_argument("--workdir", default=None, help="keep data and root here (default: a temp folder, removed)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--cpus", type=int, default=None, help="run on the first N cores only (CPU affinity)")
    args = parser.parse_args()
    if args.scale % args.spans:
        parser.error(
            f"--scale {args.scale} --spans {args.spans}: expected a scale that is a multiple of --spans (each span "
            f"holds whole copies of the taxi data). Received {args.scale}. Use e.g. --scale {args.spans}."
        )
    if not 1 <= args.window < args.spans:
        parser.error(
            f"--window {args.window}: expected 1 <= window < --spans ({args.spans}), so that a span can arrive"
        )
    cpus = limit_cpus(args.cpus)
    workdir = args.workdir or tempfile.mkdtemp(prefix="bench_spans_")
    log = os.path.join(workdir, "bench.log")
    all_rows = os.path.join(workdir, "all", "data.csv")
    rows = write_scaled_csv(all_rows, args.scale)
    staged = os.path.join(workdir, "staged")
    paths = cut_into_spans(all_rows, staged, args.spans, args.scale)
    os.remove(all_rows)
    span_mb = os.path.getsize(paths[0]) / 2**20
    warm = "off" if args.warm_start_steps == 0 else (args.warm_start_steps or "train_steps / 4")
    print(
        f"logs: {log}; cpus: {cpus} of {os.cpu_count()}; x{args.scale}: {rows:,} rows in {args.spans} spans of "
        f"~{span_mb:.0f} MB; window {args.window}; warm_start_steps: {warm}; settings: {args.settings or 'none'}",
        flush=True,
    )
    data_dir = os.path.join(workdir, "data")
    os.makedirs(data_dir, exist_ok=True)

    def arrive(number: int) -> None:  # a delivery: the span's folder appears whole
        os.replace(os.path.dirname(paths[number - 1]), os.path.join(data_dir, f"span-{number}"))

    for number in range(1, args.window + 1):
        arrive(number)
    root = os.path.join(workdir, "root")
    os.makedirs(root, exist_ok=True)
    spec_file = write_spec(root, data_dir, args.window, args.warm_start_steps, args.settings)
    metadata = os.path.join(root, "run", "metadata.sqlite")  # ResolvedSpec.metadata_path
    first = timed_run(spec_file, metadata, log)
    print(_row(f"(a) first run, spans 1-{args.window}", first), flush=True)
    arrive(args.window + 1)
    new = timed_run(spec_file, metadata, log)
    print(_row(f"(b) span {args.window + 1} arrives", new), flush=True)
    ratio = new["seconds"] / first["seconds"]
    print(
        f"\n| rows | (a) first run, {args.window} spans | (b) one new span | b/a (target <= {TARGET}x) |\n"
        "|---|---|---|---|\n"
        f"| {rows:,} (x{args.scale}, {args.spans} spans) | {first['seconds']:.0f} s, {first['rss_gb']:.2f} GB | "
        f"{new['seconds']:.0f} s, {new['rss_gb']:.2f} GB | {ratio:.2f}x |",
        flush=True,
    )
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
