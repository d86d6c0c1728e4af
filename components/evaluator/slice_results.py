"""Per-slice metrics read back from TFMA's output, named as people read them (`payment_type=Cash`).

`slice_table` is what the verdict (`verdict.json`'s `slices`), the run
records, `runs show`/`runs diff` and the report's slices page show: one row
per slice with its example count, the candidate's metrics on it, and which
metrics gate it (a `per_slice` threshold gates the slices holding at least
`min_examples` rows).
"""

from __future__ import annotations

from typing import Any

__all__ = ["slice_key_name", "slice_table"]


def _value_text(single) -> str:
    kind = single.WhichOneof("kind")
    if kind == "bytes_value":
        return single.bytes_value.decode("utf-8", "replace")
    if kind == "float_value":
        return f"{single.float_value:g}"
    if kind == "int64_value":
        return str(single.int64_value)
    return ""


def slice_key_name(slice_key) -> str:
    """A TFMA `SliceKey` as `column=value, column=value`; '' for the whole eval split."""
    return ", ".join(f"{single.column}={_value_text(single)}" for single in slice_key.single_slice_keys)


def _gated(count: int, thresholds: dict[str, dict]) -> list[str]:
    return sorted(
        name
        for name, gate in thresholds.items()
        if gate.get("per_slice") and count >= int(gate.get("min_examples") or 30)
    )


def slice_table(evaluation_uri: str, plan, thresholds: dict[str, dict]) -> list[dict[str, Any]]:
    """One row per declared slice: `{"slice", "example_count", "metrics", "gated"}`, in the plan's order.

    Args:
      evaluation_uri: the Evaluator's `evaluation` artifact folder.
      plan: the `slicing.SlicePlan` the run sliced with (its counts name every slice).
      thresholds: the request's thresholds (`per_slice`, `min_examples`).

    Returns:
      The rows; `metrics` maps spec metric names to the candidate's value on that slice.
    """
    import tensorflow_model_analysis as tfma

    found: dict[str, dict[str, float]] = {}
    for metrics in tfma.load_metrics(evaluation_uri):
        if not metrics.slice_key.single_slice_keys:
            continue
        values = found.setdefault(slice_key_name(metrics.slice_key), {})
        for entry in metrics.metric_keys_and_values:
            key = entry.key
            if key.model_name not in ("", "candidate") or key.is_diff:
                continue
            if key.HasField("sub_key") and "@" not in key.name:
                continue
            if entry.value.HasField("double_value"):
                values[key.name] = entry.value.double_value.value
    rows = []
    for name, count in plan.counts.items():
        metrics = found.get(name, {})
        rows.append(
            {
                "slice": name,
                "example_count": int(metrics.pop("example_count", count)),
                "metrics": metrics,
                "gated": _gated(count, thresholds),
            }
        )
    return rows
