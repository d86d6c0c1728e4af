"""The components' Beam arguments: the defaults, by the data's size, and per component.

Read by the compiler (which gives each component its own arguments) and by the
targets that choose a runner; `pipelines.beam.dask` gives those of a Dask cluster.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipelines.spec import ResolvedSpec

__all__ = [
    "DEFAULT_BEAM_ARGS",
    "FN_API_RUNNER",
    "LOCAL_WORKERS_RUNNER",
    "IN_PROCESS_MAX_BYTES",
    "ONE_THREAD_COMPONENTS",
    "data_size_beam_args",
    "direct_multiprocessing_args",
    "direct_threads_args",
    "per_component_beam_args",
    "setup_file_arg",
    "usable_cores",
    "worker_threads",
]

_SETUP_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "setup.py")

# In-process Beam on the FnApiRunner. TFX's examples use multi_processing,
# which starts worker processes (each importing TensorFlow) for every Beam
# step; Beam 2.74's DirectRunner also first tries to download the Prism
# runner (no network here) before falling back. `--setup_file` names this
# project's own package, which is what a remote runner needs; without any such
# flag TFX builds an sdist of TFX itself before every Beam step (~4 s each).
DEFAULT_BEAM_ARGS = (
    "--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner",
    "--direct_running_mode=in_memory",
    "--direct_num_workers=1",
    f"--setup_file={_SETUP_FILE}",
)

FN_API_RUNNER = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"
# The FnApiRunner whose worker processes carry our fixes to Beam's overheads (multi-processing mode).
LOCAL_WORKERS_RUNNER = "pipelines.beam.local_workers.LocalWorkersRunner"
# Up to this much input Beam runs on one thread (chosen when the alternative was worker processes,
# each importing TensorFlow; threads on smaller inputs are unmeasured).
IN_PROCESS_MAX_BYTES = 64 * 2**20
# Components whose Beam work stays on one thread when the others run on several (`per_component_beam_args`).
ONE_THREAD_COMPONENTS = ("Evaluator",)
_THREADS_MODE = "--direct_running_mode=multi_threading"


def setup_file_arg() -> tuple[str, ...]:
    """`--setup_file` of this project, from `DEFAULT_BEAM_ARGS`."""
    # Keeps TFX from building an sdist of TFX itself for every Beam step; the FnApiRunner stages nothing.
    return tuple(a for a in DEFAULT_BEAM_ARGS if a.startswith("--setup_file="))


def usable_cores() -> int:
    """The cores this process may run on (`taskset` and container CPU sets count), at least 1."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def direct_multiprocessing_args(workers: int | None = None) -> tuple[str, ...]:
    """FnApiRunner flags for `workers` local processes (default: one per usable core)."""
    return (
        f"--runner={LOCAL_WORKERS_RUNNER}",
        "--direct_running_mode=multi_processing",
        f"--direct_num_workers={workers or usable_cores()}",
        *setup_file_arg(),
    )


def direct_threads_args(threads: int | None = None) -> tuple[str, ...]:
    """FnApiRunner flags for `threads` worker threads in this process (default: one per usable core)."""
    return (
        f"--runner={FN_API_RUNNER}",
        _THREADS_MODE,
        f"--direct_num_workers={threads or usable_cores()}",
        *setup_file_arg(),
    )


def worker_threads(args: tuple[str, ...] | list[str]) -> int:
    """How many worker threads the FnApiRunner runs in this process for `args` (0: none, one or processes)."""
    if _THREADS_MODE not in args:
        return 0
    counts = [a.split("=", 1)[1] for a in args if a.startswith("--direct_num_workers=")]
    return int(counts[-1]) if counts and counts[-1].isdigit() else 0


def data_size_beam_args(resolved: ResolvedSpec) -> tuple[str, ...]:
    """Beam arguments from the data's size: one thread up to `IN_PROCESS_MAX_BYTES`, else a thread per core.

    Threads, not worker processes: each worker process imports TensorFlow
    (~1 GB of RSS each), and on 2 cores two processes are little faster than
    two threads at nearly twice the peak memory, while two threads are faster
    than one over a whole run. `per_component_beam_args` keeps the
    Evaluator on one thread. For worker processes, run the beam target with
    `orchestrator.beam_args` set to `direct_multiprocessing_args`' flags.
    """
    if _data_bytes(resolved) <= IN_PROCESS_MAX_BYTES or usable_cores() == 1:
        return tuple(DEFAULT_BEAM_ARGS)
    return direct_threads_args()


def per_component_beam_args(args: tuple[str, ...] | list[str]) -> dict[str, tuple[str, ...]]:
    """Component id -> Beam arguments added after `args` for that component alone.

    With worker threads (`data_size_beam_args` on large data) the Evaluator
    runs on one: TFMA's per-example metric code holds the GIL, so a second
    FnApiRunner thread costs it memory and time instead of saving time.
    """
    if _THREADS_MODE not in args:
        return {}
    one_thread = ("--direct_running_mode=in_memory", "--direct_num_workers=1")
    return {component: one_thread for component in ONE_THREAD_COMPONENTS}


def _data_bytes(resolved: ResolvedSpec) -> int:
    files = resolved.data_files or (resolved.data_path,)
    return sum(os.path.getsize(f) for f in files if os.path.isfile(f))
