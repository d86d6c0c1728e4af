"""Declarative TFX pipelines: one YAML file from raw data to TensorFlow Serving.

Public API (mirrors the CLI): `load`, `validate`, `compile`, `run`.
"""

from components.common.keras_env import ensure_legacy_keras

ensure_legacy_keras()

from pipelines.api import RunOutcome, compile, load, run, validate  # noqa: E402
from pipelines.spec import SpecError  # noqa: E402

__all__ = ["load", "validate", "compile", "run", "RunOutcome", "SpecError"]
