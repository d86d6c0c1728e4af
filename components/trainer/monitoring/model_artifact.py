"""Records the training summary as custom properties of the TFX Model artifact.

`run_fn` only receives `FnArgs`, not the output artifacts. TFX's
`GenericExecutor.Do(input_dict, output_dict, exec_properties)` calls it, and
the artifacts in that `output_dict` are what TFX publishes to ML Metadata
once `Do` returns, custom properties included. So the summary is set on the
`model` artifact found in the calling `Do` frame, matched by its URI (the
parent of `fn_args.serving_model_dir`). Outside a TFX executor (tests, the
multi-worker entry point) nothing is found and nothing is set. The stack walk
is TFX-private: `compat.tfx.executor_stack`.

The less magical alternative is a `GenericExecutor` subclass that reads
`training_summary.json` after `run_fn` and sets the same properties.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Optional

from compat.tfx import executor_stack

__all__ = ["find_model_artifact", "record_on_model_artifact"]


def find_model_artifact(serving_model_dir: str) -> Optional[Any]:
    """The TFX `Model` artifact whose `Format-Serving` dir is `serving_model_dir`, from the caller's stack."""
    model_uri = os.path.normpath(os.path.dirname(serving_model_dir))
    for artifact in executor_stack.output_artifacts("model"):
        if os.path.normpath(getattr(artifact, "uri", "") or "") == model_uri:
            return artifact
    return None


def record_on_model_artifact(serving_model_dir: str, properties: Mapping[str, Any]) -> bool:
    """Sets numbers as float and everything else as string custom properties.

    Returns:
      Whether a TFX Model artifact was found and updated.
    """
    artifact = find_model_artifact(serving_model_dir)
    if artifact is None:
        return False
    for name, value in properties.items():
        if value is None:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            artifact.set_float_custom_property(name, float(value))
        else:
            artifact.set_string_custom_property(name, str(value))
    return True
