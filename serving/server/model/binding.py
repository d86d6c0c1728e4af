"""Bind a SignatureDef's input aliases to the arguments of a loaded signature function.

TensorFlow Serving feeds a signature by its TensorInfo: the alias a client sends
names a tensor of the graph (`x` -> `x:0`), whatever the Python function that
built the graph called its argument. `tf.saved_model.load` instead gives
functions called by keyword, and the keywords are not always the aliases:

* TF1 SavedModels (`load_v1_in_v2`): the keywords are the aliases, the call
  takes tensors only, and it feeds any shape, as a TF1 session does;
* TF2 SavedModels: the keywords are the names the exporting function gave its
  arguments (its placeholders are `<signature>_<argument>`, sanitized); a tool
  that rewrites the SignatureDef keys afterwards (to column names like
  `mean radius`) leaves them behind.

`bind_arguments` maps every alias to the function's keyword: the alias itself,
else the keyword whose placeholder is the alias's tensor, else the only one
left over.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from tensorflow.core.protobuf import meta_graph_pb2

from serving.errors import message

__all__ = ["BindingError", "bind_arguments", "function_keywords"]


class BindingError(ValueError):
    """A SignatureDef input cannot be matched to an argument of its function."""


def function_keywords(function: Callable) -> list[str]:
    """The keyword arguments a loaded signature function accepts."""
    structured = getattr(function, "structured_input_signature", None)
    if structured is not None and isinstance(structured[1], Mapping) and structured[1]:
        return list(structured[1])
    return list(getattr(function, "_arg_keywords", None) or [])


def _op_name(tensor_name: str) -> str:
    return tensor_name.split(":", 1)[0]


def _sanitized(name: str) -> str:
    # What TensorFlow does to an argument name to make an op name of it.
    return re.sub(r"[^A-Za-z0-9_.\-/>]", "_", name)


def bind_arguments(
    signature_name: str, signature_def: meta_graph_pb2.SignatureDef, keywords: list[str]
) -> dict[str, str]:
    """Maps each input alias of `signature_def` to one of `keywords`.

    Args:
        signature_name: The SignatureDef map key (TF2 placeholders start with it).
        signature_def: The SignatureDef read from saved_model.pb.
        keywords: The loaded function's keyword arguments (`function_keywords`).

    Returns:
        Alias to keyword, one entry per input alias.

    Raises:
        BindingError: An alias matches no keyword, or the counts differ.
    """
    aliases = sorted(signature_def.inputs)
    free = [k for k in keywords if k not in aliases]
    bound = {alias: alias for alias in aliases if alias in keywords}
    for alias in aliases:
        if alias in bound:
            continue
        op = _op_name(signature_def.inputs[alias].name)
        candidates = [k for k in free if op in (k, _sanitized(k), f"{signature_name}_{_sanitized(k)}")]
        if len(candidates) == 1:
            bound[alias] = candidates[0]
            free.remove(candidates[0])
    unbound = [a for a in aliases if a not in bound]
    if len(unbound) == 1 and len(free) == 1:
        bound[unbound[0]] = free.pop()
        unbound = []
    if unbound or len(keywords) != len(aliases):
        raise BindingError(
            message(
                f"Signature {signature_name!r}: inputs {unbound or aliases} match no argument of its function",
                expected=f"one function argument per SignatureDef input {aliases}",
                received=f"function arguments {keywords}",
                fix="Export the signature so its input keys are the function's argument names "
                "(or rename the SignatureDef keys only, keeping the placeholders).",
            )
        )
    return bound
