"""A cron expression checker: five fields, or one of the `@daily`-style macros.

The checker is small on purpose (no dependency): it accepts what Airflow,
Kubeflow Pipelines and Vertex AI all accept, so one `schedule` works on every
target.
"""

from __future__ import annotations

import re

__all__ = ["cron_problem", "MACROS", "five_field"]

MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_DAYS = "sun mon tue wed thu fri sat".split()
# name, lowest, highest, names
_FIELDS = (
    ("minute", 0, 59, []),
    ("hour", 0, 23, []),
    ("day of month", 1, 31, []),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_ITEM = re.compile(r"^(\*|[0-9a-z]+(-[0-9a-z]+)?)(/([0-9]+))?$")


def _number(text: str, low: int, names: list[str]) -> int | None:
    if text.isdigit():
        return int(text)
    if text in names:
        return names.index(text) + low
    return None


def _field_problem(text: str, name: str, low: int, high: int, names: list[str]) -> str | None:
    for item in text.lower().split(","):
        match = _ITEM.match(item)
        if not match:
            return f"the {name} field `{text}` is not `*`, a number, a range `a-b` or a list, each with an optional `/step`"
        if match.group(4) is not None and int(match.group(4)) < 1:
            return f"the {name} field `{text}` has a step of 0"
        if match.group(1) == "*":
            continue
        bounds = match.group(1).split("-")
        values = [_number(b, low, names) for b in bounds]
        if any(v is None or not low <= v <= high for v in values):
            return f"the {name} field `{text}` is outside {low}-{high}"
        if len(values) == 2 and values[0] > values[1]:
            return f"the {name} field `{text}` is a range that runs backwards"
    return None


def cron_problem(expression: str) -> str | None:
    """Returns what is wrong with `expression`, or None when it is a valid schedule.

    Example:
        >>> cron_problem("0 3 * * *") is None
        True
        >>> cron_problem("0 25 * * *")
        'the hour field `25` is outside 0-23'
    """
    text = expression.strip()
    if text.startswith("@"):
        return None if text in MACROS else f"`{text}` is not a known macro ({', '.join(MACROS)})"
    parts = text.split()
    if len(parts) != 5:
        return f"a cron expression has 5 fields (minute hour day-of-month month day-of-week), this one has {len(parts)}"
    for part, (name, low, high, names) in zip(parts, _FIELDS):
        problem = _field_problem(part, name, low, high, names)
        if problem:
            return problem
    return None


def five_field(expression: str) -> str:
    """The expression with macros spelled out as five fields."""
    text = expression.strip()
    return MACROS.get(text, text)
