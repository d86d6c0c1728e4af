"""GPU utilisation and memory through NVML (`pynvml`, optional).

`pynvml` (pip package `nvidia-ml-py`) is not a dependency: without it, or
without an NVIDIA driver, `GpuMonitor.sample()` returns nothing and one
warning says how to enable it. TensorFlow's GPU indices count the GPUs left
after CUDA_VISIBLE_DEVICES; NVML counts every GPU, so indices are mapped
through CUDA_VISIBLE_DEVICES when it lists numbers.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Optional

from absl import logging

__all__ = ["GpuSample", "GpuMonitor", "nvml_indices"]


@dataclasses.dataclass(frozen=True)
class GpuSample:
    """One reading of one GPU."""

    gpu: int
    utilization_percent: float
    memory_used_bytes: int
    memory_total_bytes: int


def nvml_indices(tf_indices: Sequence[int], environ: Mapping[str, str] = os.environ) -> list[int]:
    """NVML device indices of TensorFlow's GPU indices, honouring CUDA_VISIBLE_DEVICES.

    Example:
        >>> nvml_indices([0, 1], {"CUDA_VISIBLE_DEVICES": "2,3"})
        [2, 3]
    """
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if not visible:
        return list(tf_indices)
    parts = [p.strip() for p in visible.split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):  # UUIDs: keep TensorFlow's order.
        return list(tf_indices)
    return [int(parts[i]) for i in tf_indices if i < len(parts)]


class GpuMonitor:
    """Reads the selected GPUs through NVML; a no-op without GPUs or pynvml."""

    def __init__(self, tf_indices: Sequence[int]):
        self._handles: list[tuple[int, object]] = []
        self._nvml = None
        if not tf_indices:
            return
        try:
            import pynvml
        except ImportError:
            logging.warning("GPU utilisation metrics are off: pynvml is not installed. pip install nvidia-ml-py")
            return
        try:
            pynvml.nvmlInit()
            self._handles = [
                (tf_index, pynvml.nvmlDeviceGetHandleByIndex(nvml_index))
                for tf_index, nvml_index in zip(tf_indices, nvml_indices(tf_indices))
            ]
            self._nvml = pynvml
        except pynvml.NVMLError as error:
            logging.warning("GPU utilisation metrics are off: NVML failed (%s). Check the NVIDIA driver.", error)

    def sample(self) -> list[GpuSample]:
        """One `GpuSample` per selected GPU (empty when NVML is unavailable)."""
        if self._nvml is None:
            return []
        samples = []
        for tf_index, handle in self._handles:
            utilization = self._nvml.nvmlDeviceGetUtilizationRates(handle)
            memory = self._nvml.nvmlDeviceGetMemoryInfo(handle)
            samples.append(GpuSample(tf_index, float(utilization.gpu), int(memory.used), int(memory.total)))
        return samples

    def close(self) -> Optional[None]:
        if self._nvml is not None:
            self._nvml.nvmlShutdown()
            self._nvml = None
