"""Trials in parallel: KerasTuner's own distributed mode, a chief oracle and worker processes on 127.0.0.1.

KerasTuner reads three environment variables (its documented distributed
tuning): `KERASTUNER_TUNER_ID` (`chief`, or `tuner<N>` for a worker),
`KERASTUNER_ORACLE_IP` and `KERASTUNER_ORACLE_PORT`. The chief's `search`
serves the oracle over gRPC; each worker's `search` asks it for trials and
runs them. Here every one of them is a process,
`python -m components.tuner.trial_process ARGS.json`, which calls the same
`tuner_fn` and `search` as the Tuner's own process would; the Tuner's process
starts them, waits, and reloads the oracle the chief saved (`tuner.reload()`),
so TFX's executor reads the best values and the trials as after a search of
its own. A process that fails stops the others, and its log's end is the error.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

from absl import logging

__all__ = ["TUNER_ID", "fn_args_record", "in_trial_process", "search_in_processes", "worker_count"]

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TUNER_ID = "KERASTUNER_TUNER_ID"
# When every worker has ended, every trial has ended and the chief has saved it (it saves in the RPC that
# ends a trial); the chief itself would notice only at its next 30 s poll (KerasTuner 1.3.5), so it is stopped.
_CHIEF_GRACE_SECONDS = 2
_LOG_TAIL_CHARS = 3000


def in_trial_process() -> bool:
    """Whether this process is one of the chief's or the workers' (the environment says so)."""
    return TUNER_ID in os.environ


def worker_count(parallel_trials: int, max_trials: int) -> int:
    """Worker processes: `parallel_trials`, at most one per core and one per trial."""
    return max(1, min(parallel_trials, os.cpu_count() or 1, max_trials))


def fn_args_record(fn_args) -> dict[str, Any]:
    """The FnArgs fields `tuner_fn` reads, as JSON-able data for the trial processes."""
    names = ("working_dir", "train_files", "eval_files", "train_steps", "eval_steps", "transform_graph_path")
    return {**{name: getattr(fn_args, name) for name in names}, "custom_config": fn_args.custom_config}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(role: str, args_file: str, port: int, log_dir: str) -> tuple[subprocess.Popen, str]:
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [_REPO, os.environ.get("PYTHONPATH")])),
        KERASTUNER_TUNER_ID=role,
        KERASTUNER_ORACLE_IP="127.0.0.1",
        KERASTUNER_ORACLE_PORT=str(port),
    )
    log_path = os.path.join(log_dir, f"{role}.log")
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "components.tuner.trial_process", args_file],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=_REPO,
        )
    return process, log_path


def _tail(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()[-_LOG_TAIL_CHARS:]


def _stop(processes: Mapping[str, tuple[subprocess.Popen, str]]) -> None:
    for process, _ in processes.values():
        if process.poll() is None:
            process.terminate()
    for process, _ in processes.values():
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def search_in_processes(record: Mapping[str, Any], workers: int, fit_kwargs: Mapping[str, Any]) -> None:
    """Runs the search in a chief process and `workers` worker processes; returns when every trial ended.

    Args:
      record: `fn_args_record(fn_args)`.
      workers: worker processes (each runs one trial at a time).
      fit_kwargs: the keyword arguments of `search` (steps per epoch, epochs).

    Raises:
      RuntimeError: a process exited with an error; the message holds the end of its log.
    """
    log_dir = os.path.join(record["working_dir"], "trial_processes")
    os.makedirs(log_dir, exist_ok=True)
    args_file = os.path.join(log_dir, "args.json")
    with open(args_file, "w", encoding="utf-8") as handle:
        json.dump({"fn_args": dict(record), "fit_kwargs": dict(fit_kwargs)}, handle)
    port = _free_port()
    logging.info("Tuner: %d trial worker(s) and a chief oracle on 127.0.0.1:%d (logs: %s).", workers, port, log_dir)
    processes = {"chief": _start("chief", args_file, port, log_dir)}
    try:
        for index in range(workers):
            processes[f"tuner{index}"] = _start(f"tuner{index}", args_file, port, log_dir)
        workers_done_at = None
        while any(process.poll() is None for process, _ in processes.values()):
            for role, (process, log_path) in processes.items():
                if process.poll() not in (None, 0):
                    raise RuntimeError(
                        f"Tuner: the trial process `{role}` failed (exit code {process.returncode}). "
                        f"The end of its log ({log_path}):\n{_tail(log_path)}"
                    )
            workers_running = any(p.poll() is None for role, (p, _) in processes.items() if role != "chief")
            if not workers_running:
                workers_done_at = workers_done_at or time.monotonic()
                if time.monotonic() - workers_done_at > _CHIEF_GRACE_SECONDS:
                    break  # every trial ended; the chief is only waiting out its poll
            time.sleep(0.5)
        for role, (process, log_path) in processes.items():
            if process.poll() not in (None, 0):
                raise RuntimeError(
                    f"Tuner: the trial process `{role}` failed (exit code {process.returncode}). "
                    f"The end of its log ({log_path}):\n{_tail(log_path)}"
                )
    finally:
        _stop(processes)
