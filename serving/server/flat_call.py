"""Call a loaded TF2 signature function with flat tensors, skipping TensorFlow's argument binding.

`tf.saved_model.load(...).signatures[name](**kwargs)` binds the keyword
arguments to the function's structured signature on every call: it
canonicalizes them, converts each value with `TensorSpec.cast` and checks its
shape with `is_subtype_of`, then calls the function on the flat list of
tensors. The server has already checked every input's alias, dtype and shape
against the SignatureDef (`tensors.check_inputs`), so on the request path that
binding is spent twice. Measured on the benchmark's MLP (8 rows, one intra-op
thread): 220 us per call with a numpy input, 135 us converting it with
`tf.constant` and calling the flat function.

The flat call is `ConcreteFunction._call_flat(tensors, captured_inputs)`,
TensorFlow's private method under both of its public call paths, with the
tensors in the order TensorFlow's `FunctionType.unpack_inputs` gives them
(keyword-only parameters sorted by name). `flat_signature_call` takes it only
when the function has the shape this was written against (keyword-only
TensorSpec parameters that match the SignatureDef's dtypes and shapes, and
the private method); otherwise it returns the public call, which is always
correct. `tests/serving/test_flat_call.py` fails if a TensorFlow upgrade
takes the fast path away or changes its answers.

Example:
    >>> loaded = tf.saved_model.load(path)
    >>> call = flat_signature_call(loaded.signatures["serving_default"], {"x": (tf.float32, (None, 48))})
    >>> call(x=np.zeros((2, 48), np.float32))["probability"].shape
    TensorShape([2, 1])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

import tensorflow as tf

__all__ = ["FlatSignatureCall", "flat_signature_call"]

# keyword -> (dtype, shape with None for unknown dimensions; None for unknown rank)
KeywordSpecs = Mapping[str, tuple[tf.DType, tuple[int | None, ...] | None]]


class FlatSignatureCall:
    """A signature function called by keyword, run through its flat call.

    Args:
        function: The loaded signature function (a ConcreteFunction).
        order: Its keyword arguments in flat-input order.
        dtypes: Keyword to the dtype each value is converted to.

    Returns (when called with keyword arguments, numpy arrays or tensors):
        The function's structured outputs (output alias to tensor).
    """

    def __init__(self, function: Callable, order: tuple[str, ...], dtypes: Mapping[str, tf.DType]) -> None:
        self.function = function
        self._plan = tuple((keyword, dtypes[keyword]) for keyword in order)

    def __call__(self, **feeds) -> Mapping[str, tf.Tensor]:
        tensors = [
            value if isinstance(value, tf.Tensor) else tf.constant(value, dtype=dtype)
            for value, dtype in ((feeds[keyword], dtype) for keyword, dtype in self._plan)
        ]
        function = self.function
        return function._call_flat(tensors, function.captured_inputs)  # noqa: SLF001 - see the module docstring


def _shape(spec: tf.TensorSpec) -> tuple[int | None, ...] | None:
    return None if spec.shape.rank is None else tuple(spec.shape.as_list())


def _flat_order(function: Callable, specs: KeywordSpecs) -> tuple[str, ...] | None:
    """The keywords in flat-input order, or None when the fast path does not apply."""
    if not callable(getattr(function, "_call_flat", None)) or not hasattr(function, "captured_inputs"):
        return None
    function_type = getattr(function, "function_type", None)
    parameters = getattr(function_type, "parameters", None)
    if not isinstance(parameters, Mapping) or set(parameters) != set(specs):
        return None
    for name, parameter in parameters.items():
        spec = getattr(parameter, "type_constraint", None)
        if (
            parameter.kind is not inspect.Parameter.KEYWORD_ONLY
            or type(spec) is not tf.TensorSpec
            or spec.dtype != specs[name][0]
            or _shape(spec) != specs[name][1]
        ):
            return None
    flat_inputs = getattr(function_type, "flat_inputs", None)
    if flat_inputs is None or len(flat_inputs) != len(parameters):
        return None
    return tuple(sorted(parameters))  # FunctionType.unpack_inputs: keyword-only parameters sorted by name


def flat_signature_call(function: Callable, specs: KeywordSpecs) -> Callable[..., Mapping[str, tf.Tensor]]:
    """The fastest correct way to call `function` by keyword.

    Args:
        function: A signature function of a TF2 SavedModel loaded with
            `tf.saved_model.load`.
        specs: Keyword argument to the (dtype, shape) its SignatureDef
            declares; the fast path needs the function's own input specs to be
            exactly these, so that the server's checks stand for TensorFlow's.

    Returns:
        A `FlatSignatureCall`, or `function` itself when its inputs are not
        plain keyword-only tensors matching `specs` or TensorFlow no longer
        has the private flat call.
    """
    order = _flat_order(function, specs)
    if order is None:
        return function
    return FlatSignatureCall(function, order, {keyword: dtype for keyword, (dtype, _) in specs.items()})
