"""Beam's state cache, weighing cached values without walking every module of the process each time.

What: replaces `apache_beam.runners.worker.statecache.get_deep_size` with
`weigh`, which calls objsize as Beam does, with Beam's private size, referents
and filter functions (`statecache._size_func`, `_get_referents_func`,
`_filter_func`), but `exclude_modules_globals=False`.

Why: the in-process Beam runner that our components use keeps side inputs and
state in a 100 MB cache, and weighs each value it loads with
`objsize.get_deep_size`. By default objsize first collects the globals of
every loaded module to leave them out of the sum: after TensorFlow, TFX, Beam
and TFMA are imported that is thousands of modules, walked again for every
value loaded, a noticeable share of a run's time and more of the
Evaluator's. Beam exposes no setting for it.

Beam's own filter already leaves modules and functions out of the sum, and a
module's globals are reachable only through those, so weighing without the
walk gives the same weights: the tests compare both on the values Beam caches.

Pinned: apache-beam `compat.beam.PINNED` (objsize 0.7.1). Shape check (`ENTRY`): statecache has
`get_deep_size` and the three private functions, and `objsize.get_deep_size` takes
`exclude_modules_globals`; otherwise Beam keeps its own (one log line).
"""

from __future__ import annotations

import inspect
from typing import Any

import compat

__all__ = ["ENTRY", "install", "weigh", "shape_problem"]

ENTRY = "compat.beam.state_cache"
_NEEDED = ("get_deep_size", "_size_func", "_get_referents_func", "_filter_func")

_installed = False


def weigh(*objs: Any) -> int:
    """Beam's `statecache.get_deep_size`, without collecting every module's globals first."""
    import objsize
    from apache_beam.runners.worker import statecache

    return objsize.get_deep_size(
        *objs,
        get_size_func=statecache._size_func,
        get_referents_func=statecache._get_referents_func,
        filter_func=statecache._filter_func,
        exclude_modules_globals=False,
    )


def shape_problem() -> str | None:
    """None when Beam's statecache and objsize have the pieces `weigh` uses, else what is missing."""
    import objsize
    from apache_beam.runners.worker import statecache

    missing = [name for name in _NEEDED if not hasattr(statecache, name)]
    if missing:
        return f"apache_beam.runners.worker.statecache has no {', '.join(missing)}"
    if "exclude_modules_globals" not in inspect.signature(objsize.get_deep_size).parameters:
        return "objsize.get_deep_size takes no `exclude_modules_globals`"
    return None


def install() -> bool:
    """Makes Beam's state cache in this process weigh values with `weigh`; returns whether it does."""
    global _installed
    if _installed:
        return True
    if not compat.check_shape(ENTRY, shape_problem):
        return False
    from apache_beam.runners.worker import statecache

    statecache.get_deep_size = weigh
    _installed = True
    return True
