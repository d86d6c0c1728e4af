"""One decision, enforced everywhere: Keras 2 (tf-keras) through `TF_USE_LEGACY_KERAS=1`.

TFX 1.16's Trainer, Transform layer and TFMA expect Keras 2 models; under
Keras 3, TFX's own Keras examples fail ("`inputs` not connected to
`outputs`"). TensorFlow reads the variable when `tf.keras` is first touched,
so it is set before TensorFlow is imported, and a process that already went
the other way gets an error naming the fix instead of a failure deep inside TFX.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["ensure_legacy_keras", "LegacyKerasError"]


class LegacyKerasError(RuntimeError):
    """TensorFlow in this process was set up to use Keras 3."""


def ensure_legacy_keras() -> None:
    value = os.environ.get("TF_USE_LEGACY_KERAS")
    if value not in (None, "1", "true", "True"):
        raise LegacyKerasError(
            f"TF_USE_LEGACY_KERAS must be 1 for TFX 1.16 (Keras 2 models). Received: TF_USE_LEGACY_KERAS={value}. "
            "Unset it or set it to 1."
        )
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    # TensorFlow's C++ start-up noise (CUDA plugin registration on CPU machines).
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"google\..*")
    # Worker processes (Beam's on large data, ExampleGen's) inherit the environment, not this filter:
    # each would print google-api-core's Python 3.10 FutureWarnings to the run's console. A user's own
    # PYTHONWARNINGS is kept.
    os.environ.setdefault("PYTHONWARNINGS", "ignore::FutureWarning")
    keras_module = sys.modules.get("tensorflow.keras") or sys.modules.get("keras.api._v2.keras")
    tf = sys.modules.get("tensorflow")
    if tf is not None and keras_module is None and "keras" in sys.modules and "tf_keras" not in sys.modules:
        version = getattr(sys.modules["keras"], "__version__", "")
        if version.startswith("3"):
            raise LegacyKerasError(
                "TensorFlow was imported with Keras 3 before this package. Set TF_USE_LEGACY_KERAS=1 before "
                "importing TensorFlow, or import `pipelines`/`components` first."
            )
