"""Fairness Indicators (`evaluation.fairness`): rates per slice at each score cut, and gates on their gaps.

Fairness Indicators' rates are TFMA's own confusion-matrix metrics, one
MetricConfig per rate and cut, named `<rate>@<cut>`:

    >>> metric_name("false_positive_rate", 0.5)
    'false_positive_rate@0.5'

TFMA computes them on every slice of `evaluation.slices`. A gap is the
largest minus the smallest value of a rate at one cut over the slices of one
slice spec (slices of different specs describe different groupings, so they
are not compared) that hold at least `min_examples` eval rows and where the
rate is defined (a slice without negatives has no false positive rate). A gap
wider than the spec's `max_gap` for its rate is a reason the model is NOT
BLESSED, naming the rate, the cut, the two slices and the gap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["RATES", "add_fairness", "fairness_gaps", "fairness_lines", "gap_reasons", "metric_name"]

# Spec rate name -> TFMA's metric class (`tfma.metrics`): false positive rate, false negative rate and
# the share of rows scored positive.
RATES = {"false_positive_rate": "FPR", "false_negative_rate": "FNR", "positive_rate": "PredictedPositiveRate"}


def metric_name(rate: str, cut: float) -> str:
    """The TFMA key (and report column) of `rate` at score cut `cut`."""
    return f"{rate}@{cut:g}"


def add_fairness(eval_config, fairness: Mapping[str, Any]) -> None:
    """Appends a MetricsSpec with every rate at every cut of `fairness["thresholds"]` to `eval_config`.

    The rates carry no TFMA threshold: their gate is on gaps between slices, which TFMA's
    thresholds (one slice at a time) cannot express; `fairness_gaps` checks it after TFMA ran.
    """
    import tensorflow_model_analysis as tfma

    configs = [
        tfma.MetricConfig(
            class_name=class_name, config=json.dumps({"name": metric_name(rate, cut), "thresholds": [cut]})
        )
        for cut in fairness["thresholds"]
        for rate, class_name in RATES.items()
    ]
    eval_config.metrics_specs.append(tfma.MetricsSpec(metrics=configs))


def fairness_gaps(
    rows: Sequence[Mapping[str, Any]], names_by_spec: Mapping[tuple[str, ...], Sequence[str]], fairness: Mapping
) -> list[dict[str, Any]]:
    """The widest gap of every rate at every cut within each slice spec, gated where `max_gap` names the rate.

    Args:
      rows: the per-slice rows (`slice_results.slice_table`): `slice`, `example_count`, `metrics`.
      names_by_spec: the slice names of each slice spec (columns -> names).
      fairness: the request's `fairness` (`thresholds`, `max_gap`, `min_examples`).

    Returns:
      Dicts `{"metric", "rate", "cut", "slices", "high", "low", "high_value", "low_value", "gap",
      "max_gap", "breach"}`, one per rate, cut and slice spec with at least two comparable slices;
      `max_gap` is None (and `breach` False) for a rate without a gate.
    """
    by_name = {row["slice"]: row for row in rows}
    minimum = int(fairness.get("min_examples") or 30)
    limits = fairness.get("max_gap") or {}
    gaps = []
    for columns, names in names_by_spec.items():
        eligible = [by_name[n] for n in names if n in by_name and by_name[n]["example_count"] >= minimum]
        for cut in fairness["thresholds"]:
            for rate in RATES:
                name = metric_name(rate, cut)
                scored = [(r["metrics"][name], r["slice"]) for r in eligible if _finite(r["metrics"].get(name))]
                if len(scored) < 2:
                    continue
                (low_value, low), (high_value, high) = min(scored), max(scored)
                gap = high_value - low_value
                limit = limits.get(rate)
                gaps.append(
                    {
                        "metric": name,
                        "rate": rate,
                        "cut": cut,
                        "slices": list(columns),
                        "high": high,
                        "low": low,
                        "high_value": round(high_value, 4),
                        "low_value": round(low_value, 4),
                        "gap": round(gap, 4),
                        "max_gap": limit,
                        "breach": limit is not None and gap > limit + 1e-12,
                    }
                )
    return gaps


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def gap_reasons(gaps: Sequence[Mapping[str, Any]]) -> list[str]:
    """A verdict reason per breached gap, e.g.

    `fairness: false_positive_rate@0.5 differs by 0.2300 between region=C (0.4100) and region=A (0.1800);
    allowed at most 0.1000 (max_gap)`.
    """
    return [
        f"fairness: {g['metric']} differs by {g['gap']:.4f} between {g['high']} ({g['high_value']:.4f}) and "
        f"{g['low']} ({g['low_value']:.4f}); allowed at most {g['max_gap']:.4f} (max_gap)"
        for g in gaps
        if g["breach"]
    ]


def fairness_lines(gaps: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per rate with its widest gap, for the run summary and `runs show`.

    `Fairness: false_positive_rate@0.5 gap 0.2300 (region=C 0.4100, region=A 0.1800), max_gap 0.1000: BREACHED`
    """
    widest: dict[str, Mapping[str, Any]] = {}
    for gap in gaps:
        kept = widest.get(gap["rate"])
        if kept is None or (gap["breach"], gap["gap"]) > (kept["breach"], kept["gap"]):
            widest[gap["rate"]] = gap
    lines = []
    for rate in RATES:
        gap = widest.get(rate)
        if gap is None:
            continue
        gate = "not gated" if gap["max_gap"] is None else f"max_gap {gap['max_gap']:.4f}: "
        if gap["max_gap"] is not None:
            gate += "BREACHED" if gap["breach"] else "ok"
        lines.append(
            f"Fairness: {gap['metric']} gap {gap['gap']:.4f} ({gap['high']} {gap['high_value']:.4f}, "
            f"{gap['low']} {gap['low_value']:.4f}), {gate}"
        )
    return lines
