"""Warm start: a new model begins from the last blessed model's weights when the architectures match.

`training.warm_start: true` wires the Trainer's `base_model` input to the
latest blessed model (the resolver the Evaluator's baseline uses). The export
(`saved_model.export`) saves the Keras model's variables, in the model's own
order, as the SavedModel's `model_variables` list; a model built from the same
spec and the same vocabularies has the same variables in the same order with
the same shapes. `warm_start` compares them one by one (count, shape, dtype)
and assigns the values only when every one matches. Anything else (another
model type, a layer added, a vocabulary that grew on a new window) is one
warning naming the first difference, and the model trains from its fresh
initialisation: warm start never fails a run.

Example:
    >>> outcome = warm_start(model, "/root/Trainer/model/7/Format-Serving")
    >>> outcome.summary()
    {'warm_started_from': '/root/Trainer/model/7/Format-Serving'}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Optional

import tensorflow as tf
from absl import logging

from serving.custom_ops import register_ops_for_saved_model

__all__ = ["WarmStart", "warm_start", "weight_mismatch"]


@dataclasses.dataclass(frozen=True)
class WarmStart:
    """What warm start did: the base model whose weights were loaded, or why the model starts cold."""

    source: Optional[str] = None
    cold_reason: Optional[str] = None

    def summary(self) -> dict[str, Optional[str]]:
        """The training summary's entries: `warm_started_from`, or `cold_start` with the reason."""
        if self.source is not None:
            return {"warm_started_from": self.source}
        return {"warm_started_from": None, "cold_start": self.cold_reason}


def _describe(variable) -> str:
    return f"`{variable.name}` {variable.shape.as_list()} {variable.dtype.name}"


def weight_mismatch(model_variables: Sequence, base_variables: Sequence) -> Optional[str]:
    """The first difference between two ordered lists of variables, or None when they match.

    Variables match by position: a Keras model lists its weights in the order
    its layers were built, so the same architecture lists the same shapes in
    the same order (names may differ by a numeric suffix from one process to
    another, so they only name the difference).

    Example:
        >>> weight_mismatch(new_model.variables, loaded.model_variables)
        'weight 3: the new model has `dense_1/kernel:0` [16, 8] float32, the base model `dense_1/kernel:0` [16, 4] float32'
    """
    if len(model_variables) != len(base_variables):
        return f"the new model has {len(model_variables)} weights, the base model {len(base_variables)}"
    for index, (new, old) in enumerate(zip(model_variables, base_variables)):
        if new.shape != old.shape or new.dtype.base_dtype != old.dtype.base_dtype:
            return f"weight {index}: the new model has {_describe(new)}, the base model {_describe(old)}"
    return None


def _base_variables(base_model_dir: str):
    register_ops_for_saved_model(base_model_dir)  # a `tokenizer: wordpiece` model runs tensorflow-text's ops
    loaded = tf.saved_model.load(base_model_dir)
    variables = getattr(loaded, "model_variables", None)
    if variables is None:  # saved the Keras way (a model capturing other resources): its own variable list
        variables = getattr(loaded, "variables", None)
    return loaded, list(variables or [])


def warm_start(model: tf.keras.Model, base_model_dir: Optional[str]) -> WarmStart:
    """Loads `base_model_dir`'s weights into `model` when they match; otherwise warns and leaves it cold.

    Call it after the model is built (and its optimizer's slots created), before `fit`, in the
    strategy's scope: assignments then reach every replica.

    Args:
      model: the freshly built model.
      base_model_dir: the last blessed model's serving SavedModel (TFX's `fn_args.base_model`);
        None on a first run (no blessed model yet).

    Returns:
      The outcome, for the training summary.
    """
    if not base_model_dir:
        reason = "no blessed model yet (a first run)"
        logging.info("Warm start: %s; training from a fresh initialisation.", reason)
        return WarmStart(cold_reason=reason)
    try:
        loaded, base_variables = _base_variables(base_model_dir)
    except (OSError, ValueError, tf.errors.OpError) as error:
        reason = f"the base model {base_model_dir} could not be read ({type(error).__name__}: {error})"
        logging.warning("Warm start: %s. Training from a fresh initialisation instead.", reason)
        return WarmStart(cold_reason=reason)
    mismatch = weight_mismatch(model.variables, base_variables)
    if mismatch is not None:
        reason = f"the architecture differs from the base model {base_model_dir}: {mismatch}"
        logging.warning(
            "Warm start: %s. Expected the same model section and vocabularies as the blessed model. "
            "Training from a fresh initialisation instead.",
            reason,
        )
        return WarmStart(cold_reason=reason)
    for variable, value in zip(model.variables, base_variables):
        variable.assign(value)
    del loaded
    logging.info("Warm start: loaded %d weights from %s.", len(base_variables), base_model_dir)
    return WarmStart(source=base_model_dir)
