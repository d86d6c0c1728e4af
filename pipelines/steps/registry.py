"""One registry of components and hooks by short name: shipped ones, and entry points.

Installed packages contribute through entry-point groups named after this
project's distribution (`yaml-tfx`):

    [project.entry-points."yaml_tfx.components"]
    my_filter = "my_pkg.component:MyFilter"

    [project.entry-points."yaml_tfx.hooks"]
    slack = "my_pkg.hooks:SlackHook"

Names resolve lazily: listing reads metadata only, and a target is imported
when a spec uses it. `package.module:Name` works anywhere a short name does.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import re
from typing import Any

from pipelines.spec.errors import did_you_mean

__all__ = [
    "COMPONENT_GROUP",
    "HOOK_GROUP",
    "Entry",
    "entries",
    "resolve",
    "load_target",
    "target_of",
    "UnresolvedReference",
]

COMPONENT_GROUP = "yaml_tfx.components"
HOOK_GROUP = "yaml_tfx.hooks"

# What this project ships; installed packages add to these through entry points.
_SHIPPED = {
    COMPONENT_GROUP: {"row_filter": "components.row_filter.component:RowFilter"},
    HOOK_GROUP: {"prometheus": "pipelines.hooks.prometheus_hook:PrometheusHook"},
}
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class UnresolvedReference(LookupError):
    """A `uses` value names nothing that can be imported; the message says how to fix it."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """A registered name: what it points at, and who provides it (`built-in` or `dist version`)."""

    name: str
    target: str
    source: str


def entries(group: str) -> dict[str, Entry]:
    """Every registered name of `group`, shipped ones first; reads metadata, imports nothing."""
    found = {name: Entry(name, target, "built-in") for name, target in _SHIPPED.get(group, {}).items()}
    for point in importlib.metadata.entry_points(group=group):
        dist = getattr(point, "dist", None)
        source = f"{dist.metadata['Name']} {dist.version}" if dist is not None else "installed"
        found.setdefault(point.name, Entry(point.name, point.value, source))
    return found


def target_of(uses: str, group: str = COMPONENT_GROUP) -> str | None:
    """The `package.module:Name` a `uses` value points at, without importing it; None if unknown."""
    if ":" in uses:
        return uses
    entry = entries(group).get(uses)
    return entry.target if entry else None


def load_target(target: str) -> Any:
    """Imports `package.module:Name` (the name may be dotted: `Class.factory`)."""
    if not _TARGET.match(target):
        raise UnresolvedReference(f"expected `package.module:Name`. Received: `{target}`. Fix the reference.")
    module_name, _, attribute = target.partition(":")
    try:
        obj = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise UnresolvedReference(
            f"module `{module_name}` cannot be imported ({err}). Install its package, or run from the folder "
            "that holds it."
        ) from None
    except Exception as err:  # the user's module raised while importing
        raise UnresolvedReference(
            f"importing `{module_name}` failed: {type(err).__name__}: {err}. Fix that module."
        ) from None
    for part in attribute.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            raise UnresolvedReference(
                f"`{module_name}` has no `{attribute}`.{did_you_mean(part, names)} Fix the name after `:`."
            )
        obj = getattr(obj, part)
    return obj


def resolve(uses: str, group: str = COMPONENT_GROUP) -> tuple[Any, str]:
    """Returns (object, target) for a short name or `package.module:Name`.

    Raises:
        UnresolvedReference: unknown name, bad format, or the import failed.
    """
    if ":" in uses:
        return load_target(uses), uses
    known = entries(group)
    if uses not in known:
        kind = "component" if group == COMPONENT_GROUP else "hook"
        names = ", ".join(f"`{n}`" for n in sorted(known)) or "none"
        raise UnresolvedReference(
            f"unknown {kind} `{uses}`.{did_you_mean(uses, known)} Expected a registered name ({names}; "
            f"`python -m pipelines components` lists them) or `package.module:Name`."
        )
    target = known[uses].target
    return load_target(target), target
