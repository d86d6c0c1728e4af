"""TFX's taxi module file in our pipeline against TFX's own taxi native-Keras example, side by side.

Both run `taxi_utils_native_keras.py` from the installed `tfx` package,
unchanged, on the example's own 15k-row CSV with the example's steps (1000
train steps, 150 eval steps): stock TFX through the example's
`_create_pipeline` under its LocalDagRunner (`pipeline_vs_tfx.STOCK_DRIVER`),
ours through `python -m pipelines run` on `pipelines/examples/chicago_taxi.yaml`
with docs/custom_code.md's taxi module-file block in place of its label,
transform, training and evaluation sections. Each runs in a fresh process; we
report wall time, peak RSS and the binary accuracy each Evaluator computed on
its eval split (about 5k rows each: the two hash splits differ, but at this
size a split's difficulty moves the figure by well under a point; the module
seeds nothing, so compare several rounds).

    .venv/bin/python benchmarks/taxi_module_vs_tfx.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_vs_tfx import EXAMPLE_DIR, REPO, eval_accuracy, run_stock, timed_process  # noqa: E402

MODULE = "taxi_utils_native_keras.py"


def doc_fragment() -> dict:
    """docs/custom_code.md's taxi module-file sections (label, transform, training, evaluation)."""
    with open(os.path.join(REPO, "docs", "custom_code.md"), encoding="utf-8") as handle:
        found = re.search(r"<!-- taxi-module-file-example: yaml -->\n```yaml\n(.*?)```", handle.read(), re.S)
    if not found:
        raise SystemExit("docs/custom_code.md has no `taxi-module-file-example: yaml` block")
    return yaml.safe_load(found.group(1))


def run_ours(root: str, log: str) -> dict:
    """Our pipeline on the example's CSV with the module file beside the spec; first run only."""
    with open(os.path.join(REPO, "pipelines", "examples", "chicago_taxi.yaml"), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    spec.update(doc_fragment())
    spec["pipeline"]["root"] = os.path.join(root, "run")
    spec["data"]["path"] = os.path.join(EXAMPLE_DIR, "data", "simple", "data.csv")
    shutil.copy(os.path.join(EXAMPLE_DIR, MODULE), os.path.join(root, MODULE))
    spec_file = os.path.join(root, "spec.yaml")
    with open(spec_file, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle)
    seconds, rss = timed_process([sys.executable, "-m", "pipelines", "run", spec_file], log)
    return {"first": seconds, "rss": rss, "accuracy": eval_accuracy(root)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench_taxi_module_")
    log = os.path.join(workdir, "bench.log")
    print(f"logs: {log}", flush=True)
    rows = []
    for round_index in range(args.rounds):
        for name, runner in (("stock TFX taxi_pipeline_native_keras", run_stock), ("ours", run_ours)):
            root = os.path.join(workdir, f"{name.split()[0]}-{round_index}")
            os.makedirs(root)
            result = runner(root, log)
            rows.append((round_index + 1, name, result))
            print(f"round {round_index + 1}: {name}: {result}", flush=True)
            shutil.rmtree(root, ignore_errors=True)
    print("\n| round | pipeline | wall (s) | peak RSS (GB) | binary accuracy (its Evaluator) |")
    print("|---|---|---|---|---|")
    for round_number, name, result in rows:
        print(f"| {round_number} | {name} | {result['first']:.1f} | {result['rss']:.2f} | {result['accuracy']:.4f} |")


if __name__ == "__main__":
    main()
