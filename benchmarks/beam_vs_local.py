"""The beam target against the local target on the same spec, alternately, in one run.

Each run is `python -m pipelines run SPEC --target local|beam` in a fresh
process on a fresh pipeline root (a copy of the spec pointed at a new folder),
so every component executes. Rounds alternate local, beam, local, beam, ...;
the table gives the median wall seconds of each target's process, of each
component (from the `[i/n] component status seconds` progress lines both
targets print) and the beam/local ratio.

    .venv/bin/python benchmarks/beam_vs_local.py [--rounds 2] [--spec pipelines/examples/chicago_taxi.yaml]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ("local", "beam")
# `[3/10] SchemaGen          executed     0.4s`: what pipelines/runners/progress.py prints.
PROGRESS_LINE = re.compile(r"^\[\d+/\d+\] (\S+)\s+(executed|cached|resolved)\s+([\d.]+)s$", re.MULTILINE)


def fresh_spec(spec_path: str, folder: str) -> str:
    """A copy of `spec_path` in `folder` whose root (and serving folder) lie in `folder`; returns its path.

    Raises:
        ValueError: the spec file is not a YAML mapping.
    """
    with open(spec_path, encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    if not isinstance(spec, dict):
        raise ValueError(f"{spec_path}: expected a pipeline spec (a YAML mapping). Received: {type(spec).__name__}.")
    spec_dir = os.path.dirname(os.path.abspath(spec_path))
    data = spec.get("data", {})
    if "path" in data and "://" not in data["path"] and not os.path.isabs(data["path"]):
        data["path"] = os.path.join(spec_dir, data["path"])  # relative paths start at the spec's folder
    spec.setdefault("pipeline", {})["root"] = os.path.join(folder, "root")
    spec.setdefault("push", {})["serving_dir"] = os.path.join(folder, "serving")
    copy = os.path.join(folder, "spec.yaml")
    with open(copy, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle, sort_keys=False)
    return copy


def run_target(spec_path: str, target: str, folder: str) -> tuple[float, dict[str, float]]:
    """Runs the spec on `target` from a fresh root; returns (wall seconds, component -> seconds).

    Raises:
        RuntimeError: the run failed (its output is in `folder`/output.txt).
    """
    spec_copy = fresh_spec(spec_path, folder)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, "-m", "pipelines", "run", spec_copy, "--target", target]
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    seconds = time.perf_counter() - started
    output = os.path.join(folder, "output.txt")
    with open(output, "w", encoding="utf-8") as handle:
        handle.write(completed.stdout + completed.stderr)
    if completed.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` exited {completed.returncode}; its output is in {output}")
    components = {name: float(secs) for name, _, secs in PROGRESS_LINE.findall(completed.stdout)}
    return seconds, components


def table(runs: dict[str, list[tuple[float, dict[str, float]]]]) -> str:
    """Median seconds per target and per component, and the beam/local ratio, as a Markdown table."""

    def median_of(target: str, component: str | None) -> float:
        return statistics.median(
            wall if component is None else parts.get(component, 0.0) for wall, parts in runs[target]
        )

    components = list(dict.fromkeys(name for _, parts in runs["local"] + runs["beam"] for name in parts))
    lines = ["| step | local (s) | beam (s) | beam/local |", "|---|---|---|---|"]
    for name in [*components, None]:
        local, beam = median_of("local", name), median_of("beam", name)
        ratio = f"{beam / local:.2f}x" if local >= 0.05 else "-"
        label = name or "**whole run (process wall time)**"
        lines.append(f"| {label} | {local:.1f} | {beam:.1f} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="runs per target, alternating (default 2)")
    parser.add_argument("--spec", default=os.path.join(REPO, "pipelines", "examples", "chicago_taxi.yaml"))
    parser.add_argument("--keep", action="store_true", help="keep the run folders (default: remove them)")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench_beam_vs_local_")
    runs: dict[str, list[tuple[float, dict[str, float]]]] = {target: [] for target in TARGETS}
    for round_index in range(args.rounds):
        for target in TARGETS:
            folder = os.path.join(workdir, f"{target}-{round_index}")
            os.makedirs(folder)
            seconds, components = run_target(args.spec, target, folder)
            runs[target].append((seconds, components))
            print(f"round {round_index + 1}: {target}: {seconds:.1f}s", flush=True)
            if not args.keep:
                shutil.rmtree(os.path.join(folder, "root"), ignore_errors=True)
    print()
    print(table(runs))
    local = statistics.median(wall for wall, _ in runs["local"])
    beam = statistics.median(wall for wall, _ in runs["beam"])
    print(f"\nbeam/local wall time (median of {args.rounds}): {beam / local:.2f}x (target <= 1.0x)")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"runs kept in {workdir}")


if __name__ == "__main__":
    main()
