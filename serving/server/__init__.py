"""The embedded, TensorFlow-Serving-compatible model server.

`EmbeddedServer`, `ServerOptions` and `DEFAULT_MAX_REQUEST_BYTES` are imported
lazily: `serving.server.observability.metrics` (the metric names the Grafana generator
reads) must not load TensorFlow with them.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "EmbeddedServer", "ServerOptions"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'serving.server' has no attribute {name!r}")
    return getattr(importlib.import_module("serving.server.app"), name)
