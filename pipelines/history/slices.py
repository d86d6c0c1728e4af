"""Per-slice metrics of a run (`evaluation.slices`) for `runs show` and `runs diff`.

The rows come from the run summary's `slices` (the Evaluator's `verdict.json`,
kept in the run record): one per slice with its example count, the
candidate's metrics and the metrics gating it.
"""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

__all__ = ["slice_deltas", "slices_text", "slice_deltas_text"]


def _metric_names(*summaries: dict) -> list[str]:
    names = {name for summary in summaries for row in summary.get("slices") or [] for name in row.get("metrics", {})}
    return sorted(names)


def slices_text(summary: dict) -> list[str]:
    """`runs show`'s slices table: SLICE, ROWS, one column per metric, GATED; empty without slices.

    With `evaluation.confidence` a bounded value reads `0.8000 [0.6812, 0.9188]`.
    """
    rows = summary.get("slices") or []
    if not rows:
        return []
    names = _metric_names(summary)
    table = [
        [
            row["slice"],
            row["example_count"],
            *(_cell(row, name) for name in names),
            ", ".join(row.get("gated") or []) or "-",
        ]
        for row in rows
    ]
    headers = ["SLICE", "ROWS", *(name.upper() for name in names), "GATED"]
    return ["Slices:", tabulate(table, headers=headers, tablefmt="plain", disable_numparse=True)]


def slice_deltas(summary_a: dict, summary_b: dict) -> list[dict[str, Any]]:
    """Per slice and metric: A's value, B's value and B-A (None where a run lacks the slice or metric), and
    each run's interval `[value, lower, upper]` under `a_interval`/`b_interval` (None without one)."""
    rows_a = {row["slice"]: row for row in summary_a.get("slices") or []}
    rows_b = {row["slice"]: row for row in summary_b.get("slices") or []}
    order = [*rows_a, *(name for name in rows_b if name not in rows_a)]
    result = []
    for slice_name in order:
        row_a, row_b = rows_a.get(slice_name) or {}, rows_b.get(slice_name) or {}
        metrics_a, metrics_b = row_a.get("metrics", {}), row_b.get("metrics", {})
        for name in sorted(set(metrics_a) | set(metrics_b)):
            a, b = metrics_a.get(name), metrics_b.get(name)
            delta = round(b - a, 4) if a is not None and b is not None else None
            result.append(
                {
                    "slice": slice_name,
                    "name": name,
                    "a": a,
                    "b": b,
                    "delta": delta,
                    "a_interval": (row_a.get("intervals") or {}).get(name),
                    "b_interval": (row_b.get("intervals") or {}).get(name),
                    "a_gated": name in (row_a.get("gated") or ()),
                    "b_gated": name in (row_b.get("gated") or ()),
                }
            )
    return result


def slice_deltas_text(deltas: list[dict[str, Any]]) -> list[str]:
    """`runs diff`'s per-slice table: the slice metrics that differ between the runs (in value, shown
    interval or whether a `per_slice` gate holds the slice to them), and how many do not; empty when
    neither run has slices."""
    if not deltas:
        return []
    changed = [d for d in deltas if _differs(d)]
    rows = [
        [
            d["slice"],
            d["name"],
            _bounded(d["a"], d.get("a_interval")),
            _bounded(d["b"], d.get("b_interval")),
            "-" if d["delta"] is None else f"{d['delta']:+.4f}",
            _gating(d),
        ]
        for d in changed
    ]
    same = len(deltas) - len(changed)
    unchanged = [f"({same} slice metric(s) unchanged, not shown)"] if same else []
    if not rows:
        return ["", "Slice metrics: no change" + (f" ({same} compared)" if same else "")]
    headers = ["SLICE", "METRIC", "A", "B", "B-A", "GATED"]
    return ["", "Slice metrics:", tabulate(rows, headers=headers, tablefmt="plain", disable_numparse=True), *unchanged]


def _differs(delta: dict[str, Any]) -> bool:
    shown = (_bounded(delta["a"], delta.get("a_interval")), _bounded(delta["b"], delta.get("b_interval")))
    return shown[0] != shown[1] or delta.get("a_gated") != delta.get("b_gated")


def _gating(delta: dict[str, Any]) -> str:
    """`yes`, `no`, or `no -> yes` when a `per_slice` gate holds the slice to this metric in one run only."""
    a, b = ("yes" if delta.get(side) else "no" for side in ("a_gated", "b_gated"))
    return a if a == b else f"{a} -> {b}"


def _cell(row: dict, name: str) -> str:
    """A slice's value of metric `name`, with its interval when the row has one (`evaluation.confidence`)."""
    return _bounded(row["metrics"].get(name), (row.get("intervals") or {}).get(name))


def _bounded(value, bounds) -> str:
    """`0.8000 [0.6812, 0.9188]` with an interval `[value, lower, upper]`, else the value alone."""
    if bounds is None or value is None:
        return _number(value)
    return f"{_number(value)} [{bounds[1]:.4f}, {bounds[2]:.4f}]"


def _number(value) -> str:
    return "-" if value is None else f"{value:.4f}"
