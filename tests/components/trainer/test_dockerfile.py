"""docker/trainer-gpu.Dockerfile: the official TensorFlow GPU image of the pinned version, Keras 2, the project."""

from __future__ import annotations

import os
import re

from trainer_fixtures import REPO

DOCKERFILE = os.path.join(REPO, "docker", "trainer-gpu.Dockerfile")


def _instructions() -> list[tuple[str, str]]:
    with open(DOCKERFILE, encoding="utf-8") as handle:
        text = re.sub(r"\\\n", " ", handle.read())
    lines = [line.strip() for line in text.splitlines()]
    return [tuple(line.split(None, 1)) for line in lines if line and not line.startswith("#")]


def _pinned(package: str) -> str:
    with open(os.path.join(REPO, "requirements.lock"), encoding="utf-8") as handle:
        for line in handle:
            name, _, version = line.partition("==")
            if name.strip().lower() == package:
                return version.split(";")[0].strip()
    raise AssertionError(f"{package} is not pinned in requirements.lock")


def test_base_image_is_the_official_gpu_image_of_the_pinned_tensorflow():
    bases = [argument for keyword, argument in _instructions() if keyword == "FROM"]
    assert bases == [f"tensorflow/tensorflow:{_pinned('tensorflow')}-gpu"]


def test_image_uses_keras_2_and_installs_the_lock_file_then_the_project():
    instructions = _instructions()
    env = " ".join(argument for keyword, argument in instructions if keyword == "ENV")
    assert "TF_USE_LEGACY_KERAS=1" in env
    runs = [argument for keyword, argument in instructions if keyword == "RUN"]
    assert any("pip install -r requirements.lock" in run for run in runs)
    assert "PYTHONPATH=/app" in env and any("import pipelines.cli, components.trainer.run_fn" in r for r in runs)
    assert "PATH=/opt/venv/bin" in env and any("python3.10 -m venv /opt/venv" in r for r in runs)
    copied = [argument.split()[0] for keyword, argument in instructions if keyword == "COPY"]
    assert {"requirements.lock", "pyproject.toml", "pipelines", "components"} <= set(copied)
