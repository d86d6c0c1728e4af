"""Warns before a local run when a component's data will not fit the memory declared for it or the machine's.

Each data-heavy component's peak memory is estimated from the size of the
input data as `intercept + slope x bytes` (CSV bytes; a `.gz` file counts at
its uncompressed size), with factors measured on the taxi data by
`benchmarks/memory_estimate.py`: the peak RSS of the local runner's process
while the component ran, at 1x and 10x the rows. The estimate is compared with

- `orchestrator.components.<id>.memory`, the machine the spec declares for the
  component (the local runner does not enforce it, but the data outgrowing it
  means the component would be killed on kubeflow/vertex), and
- the memory this machine has free now (the cgroup's limit when lower), plus
  what this process already holds: the local runner runs every component in it.

Example:
    >>> for warning in memory_warnings(resolved, ["ExampleGen", "Trainer"]):
    ...     print(f"warning: {warning}")
"""

from __future__ import annotations

import dataclasses
import math
import os
import struct
from collections.abc import Iterable, Sequence
from typing import Optional

import psutil

__all__ = ["FACTORS", "MemoryEstimate", "available_memory", "data_bytes", "estimate", "memory_warnings"]

_MIB = 2**20
_GIB = 2**30

# {component id: (intercept in MiB, bytes of peak RSS per byte of CSV)}, a line through two runs of the
# bundled chicago_taxi spec on this repository's 2-core, 24 GB machine (local runner, commit 632a310):
#   .venv/bin/python benchmarks/memory_estimate.py --sizes 1 10
#   | component     | 15,002 rows (1.8 MiB) | 150,020 rows (18.5 MiB) |
#   | ExampleGen    |   842 MiB             | 1,168 MiB               |
#   | StatisticsGen |   846 MiB             | 1,056 MiB               |
#   | Transform     |   909 MiB             | 1,023 MiB               |
#   | Trainer       | 1,149 MiB             | 1,438 MiB               |
#   | Evaluator     | 1,262 MiB             | 1,570 MiB               |
# Peaks are of the whole process while the component ran (what it holds plus what earlier components left).
# At 1.5M rows the peak is above this line: memory grows faster than linearly there, so treat the
# estimate as a floor, and re-measure when the data path changes.
FACTORS: dict[str, tuple[int, float]] = {
    "ExampleGen": (806, 19.6),
    "StatisticsGen": (822, 12.7),
    "Transform": (896, 6.9),
    "Trainer": (1117, 17.4),
    "Evaluator": (1228, 18.5),
}


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
    """A component's estimated peak memory for the data at hand."""

    component: str
    bytes: int


def _size(path: str) -> int:
    """Bytes of `path` as a component reads them: a gzip file's uncompressed size (its trailer, modulo 4 GiB)."""
    size = os.path.getsize(path)
    if path.endswith(".gz") and size >= 4:
        with open(path, "rb") as handle:
            handle.seek(-4, os.SEEK_END)
            (uncompressed,) = struct.unpack("<I", handle.read(4))
        return max(uncompressed, size)
    return size


def data_bytes(files: Iterable[str]) -> int:
    """The input's size in bytes: the sum over `files` (uncompressed for `.gz`); files that are gone count 0."""
    return sum(_size(path) for path in files if os.path.isfile(path))


def estimate(component_ids: Iterable[str], size: int) -> list[MemoryEstimate]:
    """The peak memory of each component of `component_ids` that has factors, for `size` bytes of data.

    Args:
        component_ids: the pipeline's component ids (custom steps have no factors and are left out).
        size: the input data's size in bytes.

    Returns:
        One estimate per measured component, in the order given.
    """
    estimates = []
    for component in component_ids:
        if component in FACTORS:
            intercept_mib, slope = FACTORS[component]
            estimates.append(MemoryEstimate(component, int(intercept_mib * _MIB + slope * size)))
    return estimates


def available_memory(cgroup_dir: str = "/sys/fs/cgroup") -> int:
    """Bytes this process could grow to: free memory (or the cgroup v2 limit's headroom, when lower) + its RSS."""
    free = psutil.virtual_memory().available
    try:
        with open(os.path.join(cgroup_dir, "memory.max"), encoding="ascii") as handle:
            limit = handle.read().strip()
        with open(os.path.join(cgroup_dir, "memory.current"), encoding="ascii") as handle:
            current = int(handle.read().strip())
        if limit != "max":
            free = min(free, max(int(limit) - current, 0))
    except (OSError, ValueError):
        pass
    return free + psutil.Process().memory_info().rss


def _amount(size: int) -> str:
    if size >= _GIB:
        return f"{size / _GIB:.1f} GiB"
    return f"{size / _MIB:.0f} MiB" if size >= _MIB else f"{size / 1024:.0f} KiB"


def memory_warnings(resolved, component_ids: Sequence[str], available: Optional[int] = None) -> list[str]:
    """One line per component whose estimated peak memory exceeds its declared `memory` or the machine's.

    Args:
        resolved: the checked spec (`pipelines.load`): its data files and `orchestrator.components`.
        component_ids: the ids of the compiled pipeline's components.
        available: bytes of memory the run may use; None: `available_memory()`.

    Returns:
        The warnings (empty when everything fits), each naming the component, the estimate, the limit and the fix.
    """
    size = data_bytes(resolved.data_files)
    if available is None:
        available = available_memory()
    warnings = []
    for found in estimate(component_ids, size):
        needs = f"{found.component} needs about {_amount(found.bytes)} for {_amount(size)} of data"
        declared = resolved.spec.orchestrator.component(found.component)
        if declared.memory_bytes is not None and found.bytes > declared.memory_bytes:
            warnings.append(
                f"{needs}, more than its declared `orchestrator.components.{found.component}.memory: "
                f"{declared.memory}`. Raise it to at least `{math.ceil(found.bytes / _GIB)}Gi`, "
                "or run on a sample of the data."
            )
        if found.bytes > available:
            warnings.append(
                f"{needs}, more than the {_amount(available)} this machine has free. Run on a bigger machine "
                "(or free memory), or on a sample of the data; a component out of memory is killed."
            )
    return warnings
