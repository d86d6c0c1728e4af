"""`python -m pipelines doctor` on this CPU-only machine, and its advice for GPUs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipelines.doctor import NO_GPU_EXIT_CODE, DoctorReport, GpuInfo, format_report

BUILD = {"cuda_version": "12.3", "cudnn_version": "8", "is_cuda_build": True, "cuda_compute_capabilities": ["sm_70"]}


def _report(gpus, cuda_visible_devices=None) -> DoctorReport:
    return DoctorReport("2.16.2", BUILD, gpus, cuda_visible_devices, None)


@pytest.fixture(scope="module")
def doctor_without_gpu(repo_dir) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", CUDA_VISIBLE_DEVICES="")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", "doctor"],
        capture_output=True,
        text=True,
        cwd=repo_dir,
        env=env,
        timeout=120,
        check=False,
    )


def test_without_a_gpu_doctor_exits_3_and_says_how_to_fix_it(doctor_without_gpu):
    assert doctor_without_gpu.returncode == NO_GPU_EXIT_CODE, doctor_without_gpu.stderr[-2000:]
    out = doctor_without_gpu.stdout
    assert "No GPU is visible to TensorFlow: training would run on the CPU." in out
    assert "Received: 0 GPUs (TensorFlow 2.16" in out
    assert "CUDA_VISIBLE_DEVICES='' hides GPUs" in out
    assert "Fix: install the NVIDIA driver" in out and "docker/trainer-gpu.Dockerfile" in out


def test_doctor_reports_the_cuda_and_cudnn_versions_tensorflow_was_built_with(doctor_without_gpu):
    import tensorflow as tf

    build = tf.sysconfig.get_build_info()
    assert f"CUDA {build['cuda_version']}, cuDNN {build['cudnn_version']} (build)" in doctor_without_gpu.stdout


@pytest.mark.parametrize(
    ("capabilities", "advice"),
    [
        ([(8, 0), (9, 0)], "bfloat16 also works"),
        ([(7, 5)], "float16 Tensor Cores"),
        ([(7, 0), (6, 1)], "would not help"),
    ],
)
def test_mixed_precision_advice_follows_compute_capability(capabilities, advice):
    gpus = [GpuInfo(i, f"gpu{i}", c, True) for i, c in enumerate(capabilities)]
    text = format_report(_report(gpus))
    assert f"GPUs: {len(gpus)}" in text and advice in text
    assert "compute capability {}.{}".format(*capabilities[0]) in text
    assert "GPU memory growth: on" in text and "XLA" in text


def test_memory_growth_off_is_reported():
    assert "GPU memory growth: off" in format_report(_report([GpuInfo(0, "T4", (7, 5), False)]))
