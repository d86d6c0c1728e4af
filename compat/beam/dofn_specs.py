"""Beam's state-and-timer check of a DoFn, worked out once per DoFn class instead of per bundle processor.

What: replaces `apache_beam.transforms.userstate.get_dofn_specs` (module
attribute, read by Beam's SDK worker at each call) with `dofn_specs`, which
gives Beam's own answer, remembered per DoFn class and method functions.

Why: each time Beam's SDK worker builds a bundle processor (every stage of
every component's Beam pipeline), it calls `userstate.get_dofn_specs` twice per
DoFn: that wraps every method of the DoFn in a `MethodWrapper`, which reads
its signature with `inspect`, a tenth of a run's busy time. Beam has no
option or hook to cache it.

The answer depends only on the functions behind the DoFn's methods (their
parameters' default values name the state and timer specs), so it is kept
per DoFn class and those functions. DoFns whose class answers the question
itself (`_inspect_<method>`, as Beam's wrappers of plain callables do, per
instance) and DoFns whose check raises are worked out every time, by Beam.

Pinned: apache-beam `compat.beam.PINNED`. Shape check (`ENTRY`): `userstate.get_dofn_specs`
is a function of one parameter `dofn`; otherwise Beam keeps its own (one log line).
"""

from __future__ import annotations

import inspect
import threading
import types
import weakref
from typing import Any

import compat

__all__ = ["ENTRY", "install", "dofn_specs", "shape_problem"]

ENTRY = "compat.beam.dofn_specs"

_installed = False
_lock = threading.Lock()
# DoFn class -> {(method name, function), ...} -> (state specs, timer specs)
_known: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_beams_own = None


def shape_problem(userstate=None) -> str | None:
    """None when Beam's `userstate.get_dofn_specs` is the function this entry was written against, else what differs."""
    if userstate is None:
        from apache_beam.transforms import userstate
    own = getattr(userstate, "get_dofn_specs", None)
    if own is dofn_specs:
        return None
    if not callable(own):
        return "apache_beam.transforms.userstate has no function `get_dofn_specs`"
    parameters = list(inspect.signature(own).parameters)
    if parameters != ["dofn"]:
        return f"userstate.get_dofn_specs takes {parameters}, expected ['dofn']"
    return None


def _methods(dofn: Any) -> tuple | None:
    """The (name, function) of each method of `dofn`, or None when its class inspects methods itself."""
    methods = []
    for name in dir(dofn):
        if name.startswith("_inspect_"):
            return None
        value = getattr(dofn, name, None)
        if isinstance(value, types.MethodType):
            methods.append((name, value.__func__))
    return tuple(methods)


def dofn_specs(dofn: Any) -> tuple[set, set]:
    """Beam's `userstate.get_dofn_specs(dofn)`, remembered per DoFn class and method functions.

    Returns:
        (state specs, timer specs): new sets each call, as Beam's.
    """
    methods = _methods(dofn)
    if methods is None:
        return _beams_own(dofn)
    cls = type(dofn)
    with _lock:
        per_class = _known.get(cls)
        known = per_class.get(methods) if per_class is not None else None
    if known is None:
        known = _beams_own(dofn)  # raises for a DoFn Beam rejects: nothing is kept
        with _lock:
            _known.setdefault(cls, {})[methods] = (frozenset(known[0]), frozenset(known[1]))
        return known
    return set(known[0]), set(known[1])


def install() -> bool:
    """Makes Beam use `dofn_specs` in this process; returns whether it does (False: Beam keeps its own)."""
    global _installed, _beams_own
    if _installed:
        return True
    try:
        from apache_beam.transforms import userstate
    except ImportError:
        return False
    if not compat.check_shape(ENTRY, lambda: shape_problem(userstate)):
        return False
    _beams_own = userstate.get_dofn_specs
    userstate.get_dofn_specs = dofn_specs
    _installed = True
    return True
