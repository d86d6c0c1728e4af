"""Our pipeline against TFX's own taxi native-Keras example, alternately, in one run.

Both run the same task on the same 15k-row CSV with the same components and
train steps (1000 steps of batch 40, 150 eval steps), each in a fresh
process, under TFX's LocalDagRunner (stock) and our local runner. For each
we report the first run's wall time and peak RSS, the eval accuracy the
Evaluator computed, and a no-op rerun's wall time.

    .venv/bin/python benchmarks/pipeline_vs_tfx.py [--rounds 1]
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TFX_DIR = os.path.dirname(importlib.util.find_spec("tfx").origin)
EXAMPLE_DIR = os.path.join(TFX_DIR, "examples", "chicago_taxi_pipeline")

STOCK_DRIVER = """
import os, sys
from tfx.examples.chicago_taxi_pipeline import taxi_pipeline_native_keras as example
from tfx.orchestration.local.local_dag_runner import LocalDagRunner
root = sys.argv[1]
LocalDagRunner().run(example._create_pipeline(
    pipeline_name="chicago_taxi_native_keras",
    pipeline_root=os.path.join(root, "pipeline"),
    data_root=os.path.join(example.__file__.rsplit("/", 1)[0], "data", "simple"),
    module_file=os.path.join(example.__file__.rsplit("/", 1)[0], "taxi_utils_native_keras.py"),
    serving_model_dir=os.path.join(root, "serving"),
    metadata_path=os.path.join(root, "metadata.db"),
    beam_pipeline_args=example._beam_pipeline_args))
"""


def timed_process(command: list[str], log_path: str) -> tuple[float, float]:
    """Runs `command`; returns (seconds, peak RSS in GB of it and its children)."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    started = time.perf_counter()
    with open(log_path, "a") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command} failed; see {log_path}")
    return seconds, usage.ru_maxrss / 1024 / 1024


def eval_accuracy(root: str) -> float:
    import tensorflow_model_analysis as tfma

    uris = sorted(
        glob.glob(os.path.join(root, "**", "Evaluator", "evaluation", "*"), recursive=True), key=os.path.getmtime
    )
    for metrics in tfma.load_metrics(uris[-1]):
        for key in metrics.metric_keys_and_values:
            if key.key.name == "binary_accuracy" and not key.key.HasField("sub_key"):
                return key.value.double_value.value
    raise ValueError(f"no binary_accuracy in {uris[-1]}")


def run_stock(root: str, log: str) -> dict:
    driver = os.path.join(root, "stock_driver.py")
    with open(driver, "w") as handle:
        handle.write(STOCK_DRIVER)
    first, rss = timed_process([sys.executable, driver, root], log)
    rerun, _ = timed_process([sys.executable, driver, root], log)
    return {"first": first, "rss": rss, "rerun": rerun, "accuracy": eval_accuracy(root)}


def run_ours(root: str, log: str) -> dict:
    with open(os.path.join(REPO, "pipelines", "examples", "chicago_taxi.yaml")) as handle:
        spec = yaml.safe_load(handle)
    spec["pipeline"]["root"] = os.path.join(root, "run")
    spec["data"]["path"] = os.path.join(EXAMPLE_DIR, "data", "simple", "data.csv")
    spec_file = os.path.join(root, "spec.yaml")
    with open(spec_file, "w") as handle:
        yaml.safe_dump(spec, handle)
    command = [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file]
    first, rss = timed_process(command, log)
    rerun, _ = timed_process(command, log)
    return {"first": first, "rss": rss, "rerun": rerun, "accuracy": eval_accuracy(root)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    results: dict[str, list[dict]] = {"stock TFX 1.16 example": [], "ours": []}
    workdir = tempfile.mkdtemp(prefix="bench_pipeline_")
    log = os.path.join(workdir, "bench.log")
    print(f"logs: {log}", flush=True)
    for round_index in range(args.rounds):
        for name, runner in (("stock TFX 1.16 example", run_stock), ("ours", run_ours)):
            root = os.path.join(workdir, f"{name.split()[0]}-{round_index}")
            os.makedirs(root)
            result = runner(root, log)
            results[name].append(result)
            print(f"round {round_index + 1}: {name}: {result}", flush=True)
            shutil.rmtree(root, ignore_errors=True)
    stock = results["stock TFX 1.16 example"]
    print("\n| pipeline | first run (s) | peak RSS (GB) | eval accuracy | no-op rerun (s) |")
    print("|---|---|---|---|---|")
    for name, rows in results.items():
        first = statistics.median(r["first"] for r in rows)
        print(
            f"| {name} | {first:.1f} | {max(r['rss'] for r in rows):.2f} | "
            f"{statistics.mean(r['accuracy'] for r in rows):.4f} | {statistics.median(r['rerun'] for r in rows):.1f} |"
        )
    ours = results["ours"]
    ratio = statistics.median(r["first"] for r in ours) / statistics.median(r["first"] for r in stock)
    delta = statistics.mean(r["accuracy"] for r in ours) - statistics.mean(r["accuracy"] for r in stock)
    print(
        f"\nfirst-run time ratio ours/stock: {ratio:.2f}x (target <= 0.35x); accuracy difference: {delta * 100:+.2f} points"
    )


if __name__ == "__main__":
    main()
