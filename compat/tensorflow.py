"""TensorFlow internals the project uses (written for tensorflow `PINNED`).

Entries (each function's docstring says what, why and its fallback):
- `make_callable_from_options`: `Session._make_callable_from_options`, the C++
  callable TensorFlow Serving's Session::Run matches (serving/server/model/session.py).
- `separate_collective_keys`: moves `MirroredStrategy._collective_key_base`
  before each new MirroredStrategy (components/trainer/devices/strategy.py).
- `silence_deprecation`: `tensorflow.python.util.deprecation.silence`
  (serving/server/model/session.py).
- `unregistered_ops`: `tensorflow.python.framework.op_def_registry.get`
  (serving/custom_ops.py).
- `skip_autograph_for`: `tensorflow.python.autograph.core.config`'s
  do-not-convert rules (components/common/autograph_rules.py).

TensorFlow is imported when an entry is first called, not with this module.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import compat

__all__ = [
    "PINNED",
    "make_callable_from_options",
    "separate_collective_keys",
    "silence_deprecation",
    "skip_autograph_for",
    "unregistered_ops",
]

PINNED = "2.16.2"

# How far each MirroredStrategy's collective keys are moved past the previous one's.
COLLECTIVE_KEY_STEP = 100_000


def _parameters(function: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


def _session_callable_shape() -> str | None:
    import tensorflow as tf  # noqa: PLC0415 - lazy: importing compat imports no library

    method = getattr(tf.compat.v1.Session, "_make_callable_from_options", None)
    if method is None:
        return "tf.compat.v1.Session has no `_make_callable_from_options`"
    if _parameters(method) != ("self", "callable_options"):
        return f"Session._make_callable_from_options takes {_parameters(method)}, not (self, callable_options)"
    return None


def make_callable_from_options(session: Any, feed: Sequence[str], fetch: Sequence[str]) -> Callable[..., list]:
    """A callable that runs `session` with `feed` tensors (positional arguments, in order) and returns `fetch`'s.

    What: `Session._make_callable_from_options(CallableOptions(feed, fetch))`,
    the C++ callable. Why: `Session.run` and the public `make_callable` check
    feed shapes in Python, which TensorFlow Serving's Session::Run does not (a
    request with another shape reaches the graph, which answers as TF Serving
    would), and cost a little per call. Fallback: the public
    `session.make_callable(fetch, feed_list=feed)`, which rejects a feed of a
    shape the placeholder does not allow before the graph runs.
    """
    if compat.check_shape("compat.tensorflow.make_callable_from_options", _session_callable_shape):
        from tensorflow.core.protobuf import config_pb2  # noqa: PLC0415

        options = config_pb2.CallableOptions(feed=list(feed), fetch=list(fetch))
        return session._make_callable_from_options(options)
    return session.make_callable(list(fetch), feed_list=list(feed))


def _collective_key_shape() -> str | None:
    import tensorflow as tf  # noqa: PLC0415 - lazy: importing compat imports no library

    base = getattr(tf.distribute.MirroredStrategy, "_collective_key_base", None)
    if not isinstance(base, int):
        return f"tf.distribute.MirroredStrategy._collective_key_base is {base!r}, not an int"
    return None


def separate_collective_keys() -> None:
    """Moves the collective key base, so the next MirroredStrategy's all-reduce keys differ from earlier ones'.

    What: adds `COLLECTIVE_KEY_STEP` to `MirroredStrategy._collective_key_base`
    (a class attribute). Why: each MirroredStrategy numbers its collectives
    from the same base, and TensorFlow's collective executor remembers
    instances by key: a second strategy in one process (a second `run_fn`,
    another pipeline) then hits "Shape mismatch in the collective instance".
    TensorFlow's own tests do the same
    (`strategy_combinations._mirrored_strategy_with_collective_key_base`); no
    public API sets it. Fallback: nothing (TensorFlow's own numbering).
    """
    if compat.check_shape("compat.tensorflow.separate_collective_keys", _collective_key_shape):
        import tensorflow as tf  # noqa: PLC0415

        tf.distribute.MirroredStrategy._collective_key_base += COLLECTIVE_KEY_STEP


def _silence_shape() -> str | None:
    from tensorflow.python.util import deprecation  # noqa: PLC0415

    if not callable(getattr(deprecation, "silence", None)) or _parameters(deprecation.silence) != ():
        return "tensorflow.python.util.deprecation.silence() is not a context manager without arguments"
    return None


def silence_deprecation() -> AbstractContextManager[Any]:
    """A context where TensorFlow's deprecation notices are not logged.

    What: `tensorflow.python.util.deprecation.silence()`. Why: the TF1 loader's
    notice ("use tf.saved_model.load") is for training code, not for a
    server, and TensorFlow has no public switch for it. Fallback: a context
    that does nothing (the notice is logged, once, as TensorFlow does).
    """
    if compat.check_shape("compat.tensorflow.silence_deprecation", _silence_shape):
        from tensorflow.python.util import deprecation  # noqa: PLC0415

        return deprecation.silence()
    return contextlib.nullcontext()


def _op_registry_shape() -> str | None:
    from tensorflow.python.framework import op_def_registry  # noqa: PLC0415

    if _parameters(op_def_registry.get) != ("name",):
        return "tensorflow.python.framework.op_def_registry.get is not get(name)"
    return None


def unregistered_ops(names: Iterable[str]) -> set[str]:
    """The op types among `names` that TensorFlow in this process has not registered.

    What: the names for which `op_def_registry.get(name)` is None. Why: no
    public API lists the registered ops (`tf.raw_ops` holds only those with
    Python wrappers, not those a loaded library registers). Fallback: an
    empty set (every op counts as registered; loading a graph with an unknown
    op then fails with TensorFlow's own error).
    """
    if compat.check_shape("compat.tensorflow.unregistered_ops", _op_registry_shape):
        from tensorflow.python.framework import op_def_registry  # noqa: PLC0415

        return {name for name in names if op_def_registry.get(name) is None}
    return set()


def _autograph_shape() -> str | None:
    from tensorflow.python.autograph.core import config  # noqa: PLC0415

    if not isinstance(getattr(config, "CONVERSION_RULES", None), tuple):
        return "tensorflow.python.autograph.core.config.CONVERSION_RULES is not a tuple"
    if _parameters(getattr(config, "DoNotConvert", None)) != ("module_prefix",):
        return "tensorflow.python.autograph.core.config.DoNotConvert does not take (module_prefix)"
    return None


def skip_autograph_for(module_prefix: str) -> None:
    """Has AutoGraph call the code of modules under `module_prefix` as it is, never convert it.

    What: prepends `config.DoNotConvert(module_prefix)` to AutoGraph's
    `config.CONVERSION_RULES`. Why: TensorFlow lists `keras` among the
    modules AutoGraph never converts, but not `tf_keras`, and has no public
    API to add one (`tf.autograph.experimental.do_not_convert` marks single
    functions of one's own). Fallback: nothing (AutoGraph converts the
    module's functions, slower to trace, the same results).
    """
    if compat.check_shape("compat.tensorflow.skip_autograph_for", _autograph_shape):
        from tensorflow.python.autograph.core import config  # noqa: PLC0415

        config.CONVERSION_RULES = (config.DoNotConvert(module_prefix), *config.CONVERSION_RULES)
