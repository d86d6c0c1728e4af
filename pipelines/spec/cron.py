"""Cron schedules: checked with croniter, written in each scheduler's dialect.

`orchestrator.schedule` is five fields (`minute hour day-of-month month
day-of-week`) or a macro such as `@daily`. croniter (the library Airflow
itself schedules with) decides what is valid; this module names the field at
fault and converts a valid expression for the schedulers that speak another
dialect:

- Airflow: the expression as written (Airflow parses it with croniter).
- Kubeflow Pipelines: robfig/cron, six fields with seconds first, day of week
  0-6 (Sunday is 0; croniter also accepts 7).
- Vertex AI: five fields, unix-cron, day of week 0-6.

Example:
    >>> cron_problem("0 3 * * *") is None
    True
    >>> kubeflow_cron("0 3 * * 5-7")
    '0 0 3 * * 0,5,6'
"""

from __future__ import annotations

import re

from croniter import croniter

__all__ = ["cron_problem", "cluster_cron_problem", "MACROS", "five_field", "kubeflow_cron", "vertex_cron"]

MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
# name, lowest, highest (as croniter reads them)
_FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
)
# Items (between `,` `-` `/`) only croniter reads: `L`, `L5` (last Friday), `15W`, `?`, and `n#k`.
# Month and day names (`jul`, `wed`) contain the same letters, so whole items are matched, not letters.
_CLUSTER_ONLY_ITEM = re.compile(r"^(l\d*|\d*l|\d+w|lw|\?)$")


def five_field(expression: str) -> str:
    """The expression with a macro spelled out as five fields."""
    text = expression.strip()
    return MACROS.get(text.lower(), text)


def _bad_field(parts: list[str]) -> str:
    """Which field makes croniter refuse the expression (each tried alone with `*` elsewhere)."""
    for index, (name, low, high) in enumerate(_FIELDS):
        alone = ["*"] * 5
        alone[index] = parts[index]
        if not croniter.is_valid(" ".join(alone)):
            return f"the {name} field `{parts[index]}` is not valid: expected `*`, a number or name in {low}-{high}, a range `a-b` or a list, each with an optional `/step`"
    return "the fields do not combine into a valid schedule"


def cron_problem(expression: str) -> str | None:
    """Returns what is wrong with `expression`, or None when croniter accepts it as a schedule.

    Example:
        >>> cron_problem("0 25 * * *")
        'the hour field `25` is not valid: expected `*`, a number or name in 0-23, a range `a-b` or a list, each with an optional `/step`'
    """
    text = expression.strip()
    if text.startswith("@"):
        return None if text.lower() in MACROS else f"`{text}` is not a known macro ({', '.join(MACROS)})"
    parts = text.split()
    if len(parts) != 5:
        return f"a cron expression has 5 fields (minute hour day-of-month month day-of-week), this one has {len(parts)}"
    if not croniter.is_valid(text):
        return _bad_field(parts)
    return None


def cluster_cron_problem(expression: str) -> str | None:
    """What Kubeflow Pipelines' and Vertex AI's schedulers cannot take in a valid expression, or None.

    croniter (and so Airflow) also accepts `L` (last day), `W` (weekday) and
    `#` (n-th weekday), which robfig/cron and Vertex AI's unix-cron do not.
    """
    items = re.split(r"[\s,/-]+", five_field(expression).lower())
    used = []
    for item in items:
        if "#" in item:
            used.append("#")
        elif _CLUSTER_ONLY_ITEM.match(item):
            used += [feature for feature in ("L", "W", "?") if feature.lower() in item]
    used = list(dict.fromkeys(used))
    if used:
        return (
            f"uses {', '.join(f'`{u}`' for u in used)}, which Kubeflow Pipelines' and Vertex AI's schedulers do not "
            "accept (croniter and Airflow do)"
        )
    return None


def _expanded_fields(expression: str) -> list[str]:
    """The five fields as plain lists of numbers (`*` kept), day of week 0-6: every scheduler reads these."""
    fields = croniter(five_field(expression)).expanded[:5]
    return ["*" if values == ["*"] else ",".join(str(v) for v in sorted(set(values))) for values in fields]


def kubeflow_cron(expression: str) -> str:
    """Kubeflow Pipelines' robfig/cron form: a seconds field first, day of week 0-6.

    Raises:
        ValueError: the expression uses a feature KFP's scheduler lacks (see `cluster_cron_problem`).
    """
    problem = cluster_cron_problem(expression)
    if problem:
        raise ValueError(f"schedule {expression!r} {problem}.")
    return " ".join(["0", *_expanded_fields(expression)])


def vertex_cron(expression: str) -> str:
    """Vertex AI's unix-cron form: five fields, day of week 0-6.

    Raises:
        ValueError: the expression uses a feature Vertex AI's scheduler lacks.
    """
    problem = cluster_cron_problem(expression)
    if problem:
        raise ValueError(f"schedule {expression!r} {problem}.")
    return " ".join(_expanded_fields(expression))
