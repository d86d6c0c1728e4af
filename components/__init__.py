"""TFX components of the framework, one package per component.

Importing this package enforces Keras 2 (tf-keras); see `components.common.keras_env`.
"""

from components.common.keras_env import ensure_legacy_keras

ensure_legacy_keras()
