"""A/B of the embedded server: checkouts side by side, against the canned-answer floor.

    git worktree add /tmp/before HEAD~1
    TF_USE_LEGACY_KERAS=1 .venv/bin/python benchmarks/serving_ab.py --tree before=/tmp/before --tree after=.

`serving_load.py` measures each configuration for 5 s, in rounds minutes
apart. On the 2-core machines here the speed of the whole machine drifts
between rounds (one run read REST served / floor 0.55x, 0.40x, 0.38x in
its three rounds), which hides changes of 10-20%. This script starts the
floor server and one embedded server per checkout at once, then loads them in
turn in short slices (`--seconds`, after `serving_load`'s 1 s warmup) for
`--cycles` cycles, alternating the order, and reports each server's QPS
and its ratio to the floor measured in the same cycle, as medians. A change
counts when its ratio moves by more than the spread the table shows.

Each server is `python -m serving up --embedded` run from its checkout
(PYTHONPATH and working directory), with batching as `serving_load.py`
configures it (`--mode off` for none). Same model, load generators and
TF_NUM_INTRAOP_THREADS (1) as `serving_load.py`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import serving_load  # noqa: E402 - after the path is set

FLOOR = "floor"


def summarize(cycles: list[dict[str, float]], names: list[str]) -> list[str]:
    """Lines of medians: QPS per server, ratio to the floor of the same cycle, ratio to the first tree."""
    lines = ["median QPS: " + ", ".join(f"{n} {statistics.median(c[n] for c in cycles):,.0f}" for n in names)]
    for name in names[1:]:
        ratios = [c[name] / c[FLOOR] for c in cycles]
        lines.append(
            f"{name} / floor: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
        )
    first = names[1] if len(names) > 2 else None
    for name in names[2:]:
        ratios = [c[name] / c[first] for c in cycles]
        lines.append(
            f"{name} / {first}: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
        )
    return lines


def _tree(text: str) -> tuple[str, Path]:
    name, _, path = text.partition("=")
    root = Path(path or ".").resolve()
    if not name or name == FLOOR or not (root / "serving" / "__main__.py").is_file():
        raise argparse.ArgumentTypeError(
            f"--tree {text!r}: expected NAME=PATH, NAME not {FLOOR!r}, PATH a checkout of this project "
            "(serving/__main__.py in it); make one with `git worktree add PATH REV`"
        )
    return name, root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tree", type=_tree, action="append", help="NAME=PATH of a checkout to serve from (repeat; default: this one)"
    )
    parser.add_argument("--cycles", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=2.0, help="measured seconds per slice (after 1 s warmup)")
    parser.add_argument("--protocol", choices=["REST", "gRPC"], default="REST")
    parser.add_argument("--mode", choices=["on", "off"], default="on", help="batching")
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args(argv)
    trees = args.tree or [("this", ROOT)]
    if len({name for name, _ in trees}) != len(trees):
        parser.error("--tree names must differ")
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
    protocol = args.protocol
    if protocol == "gRPC":
        protocol = serving_load.GRPC_CLIENTS["h2load" if serving_load.H2LOAD else "python"]

    work = Path(tempfile.mkdtemp(prefix="serving-ab-"))
    servers: list[tuple[str, object]] = []
    try:
        version_dir = work / "models" / serving_load.MODEL / "1"
        serving_load.export_model(version_dir)
        expected = serving_load.expected_outputs(version_dir)
        servers.append((FLOOR, serving_load.FloorServer()))
        for index, (name, root) in enumerate(trees):
            servers.append((name, serving_load.Server(work / "models", work / f"cfg-{index}", args.mode == "on", root)))
        names = [name for name, _ in servers]
        cycles = []
        for cycle in range(args.cycles):
            order = servers if cycle % 2 == 0 else [servers[0], *reversed(servers[1:])]
            qps = {}
            for name, server in order:
                answer = None if name == FLOOR else expected
                qps[name] = serving_load.load_cell(server, protocol, args.concurrency, args.seconds, expected=answer)[
                    "qps"
                ]
            cycles.append(qps)
            print(
                f"cycle {cycle + 1}/{args.cycles}: "
                + ", ".join(f"{n} {qps[n]:,.0f} ({qps[n] / qps[FLOOR]:.3f})" for n in names),
                flush=True,
            )
    finally:
        for _, server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{protocol}, batching {args.mode}, concurrency {args.concurrency}, {args.seconds:g} s slices:")
    print("\n".join(summarize(cycles, names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
