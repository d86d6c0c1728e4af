"""Two training workers against one, on this machine's CPUs, through the real worker entry point.

Each configuration runs `python -m components.trainer.worker FN_ARGS.json`
in fresh processes: one process alone (strategy `auto` -> one device), then
two processes with a TF_CONFIG cluster on 127.0.0.1 (strategy `auto` ->
MultiWorkerMirroredStrategy). Same model (the taxi spec's), same
per-replica batch and steps, so two workers process twice the examples per
step. Reported: steady examples/sec over all workers (the chief's summary),
`fit` seconds and the processes' wall time.

    .venv/bin/python benchmarks/trainer_workers.py [--steps 400] [--batch 128]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from trainer_common import REPO, last_run_outputs, materialize, print_table, taxi_fn_args


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_workers(fn_args, count: int, work_dir: str) -> tuple[dict, float]:
    from components.trainer.worker import save_fn_args

    path = os.path.join(work_dir, f"fn_args_{count}.json")
    save_fn_args(fn_args, path)
    cluster = {"worker": [f"127.0.0.1:{_free_port()}" for _ in range(count)]}
    started = time.perf_counter()
    processes = []
    for index in range(count):
        env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
        env.pop("TF_CONFIG", None)
        if count > 1:
            env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        log = open(os.path.join(work_dir, f"workers_{count}_{index}.log"), "w")  # noqa: SIM115
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "components.trainer.worker", path],
                env=env,
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    codes = [process.wait() for process in processes]
    wall = time.perf_counter() - started
    if any(codes):
        raise SystemExit(f"a worker failed (exit codes {codes}); see {work_dir}/workers_{count}_*.log")
    with open(os.path.join(fn_args.model_run_dir, "training_summary.json"), encoding="utf-8") as handle:
        return json.load(handle), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--work-dir", default=None)
    args = parser.parse_args()
    examples_dir, graph_dir = last_run_outputs()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="trainer_workers_")
    patterns = materialize(examples_dir, graph_dir, work_dir)
    training = {"train_steps": args.steps, "batch_size": args.batch, "eval_steps": 5, "checkpoint_every_steps": None}
    rows, baseline = [], None
    for count in (1, 2):
        summary, wall = run_workers(
            taxi_fn_args(work_dir, f"workers_{count}", training, patterns, graph_dir), count, work_dir
        )
        rate = summary["examples_per_second"]
        baseline = baseline or rate
        rows.append(
            [
                count,
                summary["strategy"],
                summary["replicas"],
                summary["global_batch"],
                f"{rate:,.0f}",
                f"{rate / baseline:.2f}x",
                f"{summary['seconds']:.1f}",
                f"{wall:.1f}",
            ]
        )
    print(f"\n{args.steps} steps, per-replica batch {args.batch}, taxi wide-and-deep, {os.cpu_count()} CPU cores\n")
    print_table(["workers", "strategy", "replicas", "global batch", "steady ex/s", "vs 1", "fit s", "wall s"], rows)


if __name__ == "__main__":
    main()
