"""A wide table whose spec uses few columns against a narrow one with the same used columns, in one run.

Both CSVs have the same 400 rows of a label and 3 features; the wide one adds
4,997 columns the spec never names (400 x 5,001, about 15 MB), the narrow one
adds 1 (400 x 5). Each runs `pipelines/run_local.py` in a fresh process and
root, then twice more with nothing changed: a plain rerun (`Up to date`, after
`validate`) and `--force` (TFX's cache re-checks every step). The table gives
each step's time as the console prints it, the wall time of each run, and the
wide/narrow ratio: the columns a spec does not use should cost next to nothing.
Wide and narrow run one after the other in the same call, on the same machine and
load (noisy on a shared machine: compare the two columns of one call).

    .venv/bin/python benchmarks/wide_table.py [--rows 400] [--extra-columns 4997]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STEP = re.compile(r"^\[\d+/\d+\] (\S+)\s+(\S+)\s+([0-9.]+)s")


def write_csv(path: str, rows: int, extra_columns: int, seed: int = 0) -> None:
    """`label`, `f0`..`f2` (the label follows f0 + f1) and `extra_columns` random columns `x<i>` nobody uses."""
    rng = np.random.default_rng(seed)
    used = rng.normal(size=(rows, 3))
    label = (used[:, 0] + used[:, 1] > 0).astype(int)
    other = rng.normal(size=(rows, extra_columns))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(",".join(["label", "f0", "f1", "f2", *(f"x{i}" for i in range(extra_columns))]) + "\n")
        for row in range(rows):
            cells = [str(label[row]), *(f"{v:.4f}" for v in used[row]), *(f"{v:.4f}" for v in other[row])]
            handle.write(",".join(cells) + "\n")


def write_spec(path: str, name: str, data: str, root: str) -> None:
    spec = {
        "pipeline": {"name": name, "root": root},
        "data": {"path": data, "splits": {"train": 2, "eval": 1}},
        "features": {name: {"transform": "zscore"} for name in ("f0", "f1", "f2")},
        "label": {"name": "label", "column": "label", "task": "classification"},
        "model": {"type": "dnn", "hidden_units": [8]},
        "training": {"train_steps": 100, "eval_steps": 5, "batch_size": 32},
        "evaluation": {"metrics": ["binary_accuracy"]},
    }
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle, sort_keys=False)


def run(spec: str, log: str, *flags: str) -> tuple[float, dict[str, float]]:
    """(wall seconds, step -> seconds as the console printed them) of one `run_local.py` run."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec, *flags],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    seconds = time.perf_counter() - started
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(completed.stdout + completed.stderr)
    if completed.returncode != 0:
        raise RuntimeError(f"{spec} failed (exit {completed.returncode}); see {log}")
    steps = {}
    for line in completed.stdout.splitlines():
        found = _STEP.match(line)
        if found:
            steps[found.group(1)] = float(found.group(3))
    return seconds, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--extra-columns", type=int, default=4997)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="wide_table-")
    log = os.path.join(folder, "runs.log")
    print(f"logs: {log}", flush=True)
    results = {}
    for name, extra in (("narrow", 1), ("wide", args.extra_columns)):
        data = os.path.join(folder, f"{name}.csv")
        write_csv(data, args.rows, extra)
        spec = os.path.join(folder, f"{name}.yaml")
        write_spec(spec, name, data, os.path.join(folder, f"root-{name}"))
        first = run(spec, log)
        cached = run(spec, log)
        forced = run(spec, log, "--force")
        results[name] = (first, cached, forced, os.path.getsize(data))
        print(
            f"{name}: {4 + extra} columns, {first[0]:.1f} s, rerun {cached[0]:.1f} s, --force {forced[0]:.1f} s",
            flush=True,
        )
    narrow, wide = results["narrow"], results["wide"]
    print(f"\n| step | narrow, 5 columns (s) | wide, {4 + args.extra_columns:,} columns (s) | wide / narrow |")
    print("|---|---|---|---|")
    for step in narrow[0][1]:
        a, b = narrow[0][1][step], wide[0][1].get(step, float("nan"))
        print(f"| {step} | {a:.1f} | {b:.1f} | {b / a:.1f}x |" if a >= 0.1 else f"| {step} | {a:.1f} | {b:.1f} | - |")
    print(f"| whole run (wall) | {narrow[0][0]:.1f} | {wide[0][0]:.1f} | {wide[0][0] / narrow[0][0]:.1f}x |")
    print(
        f"| rerun, nothing changed (wall) | {narrow[1][0]:.1f} | {wide[1][0]:.1f} | {wide[1][0] / narrow[1][0]:.1f}x |"
    )
    print(
        f"| rerun --force, all cached (wall) | {narrow[2][0]:.1f} | {wide[2][0]:.1f} | {wide[2][0] / narrow[2][0]:.1f}x |"
    )
    print(f"\nCSV sizes: narrow {narrow[3] / 1e6:.2f} MB, wide {wide[3] / 1e6:.1f} MB; {args.rows} rows each.")


if __name__ == "__main__":
    main()
