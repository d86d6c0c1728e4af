"""A TFX Resolver node's strategy and inputs, replaced in place by another Resolver's.

What: copies `_strategy_class`, `_raw_inputs` and `_input_dict` from one
`Resolver` to another and drops one output from its `_output_dict`.

Why: KFP v2 compiles only TFX's own resolver strategies, so on Kubeflow the
baseline Resolver must use `LatestBlessedModelStrategy`; the Evaluator already
holds the node's output channels, so the node must change in place rather than
be replaced, and a Resolver has no public setter for any of these.

Pinned: tfx `compat.tfx.PINNED`. Shape check (`ENTRY`): `Resolver.__init__` sets the four
attributes and `Resolver.outputs` is the `_output_dict`; otherwise the node is left as
it is (one log line; KFP's compiler then names the unsupported strategy).
"""

from __future__ import annotations

import compat

__all__ = ["ENTRY", "shape_problem", "take_strategy_and_inputs"]

ENTRY = "compat.tfx.resolver"
_ATTRIBUTES = ("_strategy_class", "_raw_inputs", "_input_dict", "_output_dict")


def shape_problem() -> str | None:
    """None when a Resolver keeps its strategy, inputs and outputs in the attributes swapped here, else what differs."""
    from tfx.dsl.components.common import resolver

    unset = [name for name in _ATTRIBUTES if name not in resolver.Resolver.__init__.__code__.co_names]
    if unset:
        return f"Resolver.__init__ no longer sets {', '.join(unset)}"
    if "_output_dict" not in resolver.Resolver.outputs.fget.__code__.co_names:
        return "Resolver.outputs is no longer its `_output_dict`"
    return None


def take_strategy_and_inputs(node, other, drop_output: str) -> bool:
    """Gives Resolver `node` the strategy and inputs of Resolver `other`, and drops its output `drop_output`.

    Returns:
        Whether it did (False: the node is unchanged).
    """
    if not compat.check_shape(ENTRY, shape_problem):
        return False
    node._strategy_class = other._strategy_class
    node._raw_inputs = other._raw_inputs
    node._input_dict = other._input_dict
    node._output_dict.pop(drop_output, None)
    return True
