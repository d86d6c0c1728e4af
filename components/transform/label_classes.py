"""Class names of a classification label: their string form and their order.

Pure Python, shared by the compiler (which finds the classes in the data or
takes the declared list) and Transform (which stores them as the
`label_classes` vocabulary). A class is named by the label's string form:
text as is, integers as digits (`1`, also for a CSV cell `1.0`).

Order: a declared list keeps its order; otherwise classes are sorted
(numerically when all are integers). A binary label puts its positive class
at index 1: `positive_class` if given, else the declared list's second entry,
else `1`/`true`/`yes` (any case) when present, else the second class in
sorted order.

Example:
    >>> order_classes(["yes", "no"])
    ['no', 'yes']
    >>> order_classes(["3", "1", "2"])
    ['1', '2', '3']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Optional

__all__ = ["LabelClassError", "class_name", "order_classes", "POSITIVE_NAMES"]

POSITIVE_NAMES = ("1", "true", "yes")
_SHOWN = 10


class LabelClassError(ValueError):
    """The declared or found classes cannot make a classification label.

    `key` names the `label` key to fix: `classes`, `positive_class` or `column`.
    """

    def __init__(self, message: str, key: str = "column"):
        super().__init__(message)
        self.key = key


def class_name(value: Any) -> str:
    """The string form of one label value (what Transform compares with the class names).

    Args:
      value: a label value from the spec or the data (text, integer, or an integral float).

    Returns:
      The class name: text as is, integers (and floats like 2.0) as digits.

    Raises:
      LabelClassError: a boolean, or a number with a fractional part.
    """
    if isinstance(value, bool):
        raise LabelClassError(
            f"class `{value}` is a YAML boolean. Expected text or an integer as it appears in the data. "
            f"Received: {value!r}. Quote it, e.g. '{'yes' if value else 'no'}'.",
            "classes",
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise LabelClassError(
                f"class `{value}` has a fractional part. Expected integers or text as classes. Received: {value!r}. "
                "Round the label, or use `task: regression`."
            )
        return str(int(value))
    if isinstance(value, str):
        return value
    raise LabelClassError(f"class `{value!r}` is a {type(value).__name__}. Expected text or an integer.")


def _sorted(names: Iterable[str]) -> list[str]:
    names = sorted(set(names))
    try:
        return sorted(names, key=int)
    except ValueError:
        return names


def _shown(names: Sequence[str]) -> str:
    more = f" (and {len(names) - _SHOWN} more)" if len(names) > _SHOWN else ""
    return ", ".join(repr(n) for n in names[:_SHOWN]) + more


def order_classes(
    found: Optional[Iterable[str]] = None,
    declared: Optional[Sequence[Any]] = None,
    positive_class: Any = None,
) -> list[str]:
    """The class names in index order.

    Args:
      found: class names seen in the data (string form), or None when not looked at.
      declared: the spec's `label.classes`, or None.
      positive_class: the spec's `label.positive_class` (binary only), or None.

    Returns:
      The class names; for two classes the positive one is at index 1.

    Raises:
      LabelClassError: fewer than two classes, duplicates in the declared list, data
        values outside the declared list, or a positive class that is not a class.
    """
    found_names = None if found is None else _sorted(found)
    if declared is not None:
        names = [class_name(c) for c in declared]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise LabelClassError(
                f"`label.classes` repeats {_shown(duplicates)}. Expected each class once. Remove the repeats.",
                "classes",
            )
        unknown = [n for n in found_names or () if n not in names]
        if unknown:
            raise LabelClassError(
                f"the label column holds {_shown(unknown)}, not in `label.classes` [{_shown(names)}]. Expected only "
                "declared classes. Add them to `label.classes`, or remove those rows from the data.",
                "classes",
            )
    elif found_names is not None:
        names = found_names
    else:
        names = ["0", "1"]
    if len(names) < 2:
        source = "`label.classes`" if declared is not None else "the label column"
        raise LabelClassError(
            f"{source} has {len(names)} class(es) ({_shown(names)}). Expected at least two classes for "
            "`task: classification`. Add data of another class, or use `task: regression`.",
            "classes" if declared is not None else "column",
        )
    if positive_class is not None:
        positive = class_name(positive_class)
        if len(names) != 2:
            raise LabelClassError(
                f"`label.positive_class` is for two classes. Expected a binary label. Received: {len(names)} "
                f"classes ({_shown(names)}). Remove `positive_class`.",
                "positive_class",
            )
        if positive not in names:
            raise LabelClassError(
                f"`label.positive_class` {positive!r} is not a class. Expected one of {_shown(names)}. "
                "Fix `positive_class`.",
                "positive_class",
            )
    elif len(names) == 2 and declared is None:
        preferred = [n for n in names if n.lower() in POSITIVE_NAMES]
        positive = preferred[0] if len(preferred) == 1 else names[1]
    else:
        positive = names[1] if len(names) == 2 else None
    if positive is not None:
        names = [n for n in names if n != positive] + [positive]
    return names
