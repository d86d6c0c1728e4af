"""`evaluation.confidence`: TFMA's confidence intervals, and gates that the interval's bound must clear.

With `confidence: 0.95` the Evaluator asks TFMA for confidence intervals
(jackknife: the eval split in buckets, each metric recomputed without each
bucket). TFMA writes, per metric, its interval at its fixed 95% level with the
standard error and degrees of freedom; `intervals` rescales it to the spec's
level with Student's t (the same arithmetic as TFMA's
`math_util.calculate_confidence_interval`, so 0.95 gives TFMA's own bounds).

TFMA's thresholds check the point estimate. A model is blessed only when the
bound clears each value threshold as well: the lower bound for a `min`, the
upper bound for a `max` (`bound_failures`), so a noisy eval split cannot bless
a model by chance. TFMA's jackknife bounds every slice it computes as well
(`slice_intervals`): a `per_slice` threshold holds each slice it gates to its
bound too, with the slice named in the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["TFMA_LEVEL", "bound_failures", "enable", "interval_text", "intervals", "level_text", "slice_intervals"]

TFMA_LEVEL = 0.95  # the level TFMA 0.47 writes its bounds at (`math_util.calculate_confidence_interval`)


def enable(eval_config) -> None:
    """Turns on TFMA's confidence intervals (jackknife) in `eval_config`, its buckets dealt with a fixed
    seed so a rerun of one model on one eval split gets the same intervals (`compat.tfma.jackknife_seed`)."""
    import tensorflow_model_analysis as tfma

    from compat.tfma.jackknife_seed import seed_jackknife

    eval_config.options.compute_confidence_intervals.value = True
    eval_config.options.confidence_intervals.method = tfma.ConfidenceIntervalOptions.JACKKNIFE
    seed_jackknife()


# Metrics that are shares of rows (or of pairs, for AUC): an interval is cut to [0, 1] (the jackknife's
# t-interval is symmetric, and ran past 1 for a false positive rate of 0.99); errors and losses to >= 0.
_PROPORTIONS = frozenset(
    {"accuracy", "binary_accuracy", "auc", "auc_precision_recall", "precision", "recall", "top_k_accuracy"}
)
_PROPORTION_PREFIXES = ("false_positive_rate", "false_negative_rate", "positive_rate", "precision@", "recall@")
_NON_NEGATIVE = frozenset({"mean_squared_error", "mean_absolute_error", "root_mean_squared_error", "loss"})


def _within_range(name: str, low: float, high: float) -> tuple[float, float]:
    """`low`, `high` cut to the range `name`'s values can take."""
    if name in _PROPORTIONS or name.startswith(_PROPORTION_PREFIXES):
        return max(low, 0.0), min(high, 1.0)
    if name in _NON_NEGATIVE:
        return max(low, 0.0), high
    return low, high


def _t(level: float, dof: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(1 - (1 - level) / 2.0, dof))


def _interval(entry, level: float) -> list[float] | None:
    """`[value, lower, upper]` of one of TFMA's metric entries at `level`, or None where TFMA bounded nothing."""
    key, interval = entry.key, entry.confidence_interval
    if key.model_name not in ("", "candidate") or key.is_diff or not entry.value.HasField("double_value"):
        return None
    if not entry.HasField("confidence_interval") or not interval.lower_bound.HasField("double_value"):
        return None
    low, high = interval.lower_bound.double_value.value, interval.upper_bound.double_value.value
    dof = interval.degrees_of_freedom.value
    centre, half = (low + high) / 2.0, (high - low) / 2.0
    if dof > 0 and level != TFMA_LEVEL:
        half *= _t(level, dof) / _t(TFMA_LEVEL, dof)
    return [entry.value.double_value.value, *_within_range(key.name, centre - half, centre + half)]


def _bounded(metrics, level: float) -> dict[str, list[float]]:
    found = ((entry.key.name, _interval(entry, level)) for entry in metrics.metric_keys_and_values)
    return {name: bounds for name, bounds in found if bounds is not None}


def intervals(evaluation_uri: str, level: float) -> dict[str, list[float]]:
    """Spec metric name -> `[value, lower, upper]` on the whole eval split at `level`, for metrics TFMA bounded.

    Args:
      evaluation_uri: the Evaluator's `evaluation` artifact folder.
      level: the confidence level (`evaluation.confidence`), e.g. 0.95.
    """
    import tensorflow_model_analysis as tfma

    result: dict[str, list[float]] = {}
    for metrics in tfma.load_metrics(evaluation_uri):
        if not metrics.slice_key.single_slice_keys:
            result.update(_bounded(metrics, level))
    return result


def slice_intervals(evaluation_uri: str, level: float) -> dict[str, dict[str, list[float]]]:
    """Slice name (`region=C`) -> spec metric name -> `[value, lower, upper]` at `level`, as `intervals` per slice."""
    import tensorflow_model_analysis as tfma

    from components.evaluator.slice_results import slice_key_name

    result: dict[str, dict[str, list[float]]] = {}
    for metrics in tfma.load_metrics(evaluation_uri):
        if metrics.slice_key.single_slice_keys:
            bounded = _bounded(metrics, level)
            if bounded:
                result.setdefault(slice_key_name(metrics.slice_key), {}).update(bounded)
    return result


def bound_failures(
    bounded: Mapping[str, list[float]], thresholds: Mapping[str, Mapping[str, Any]], level: float, where: str = ""
) -> list[str]:
    """A reason for each value threshold the point estimate clears but the interval's bound does not.

    Args:
      bounded: `intervals`' result.
      thresholds: the request's thresholds (spec name -> gate with `min`, `max`, `classes`).
      level: the confidence level, for the reason's text.
      where: the slice the intervals are of (`region=C`), named after the metric; '' for the whole eval split.

    Returns:
      Sentences like `binary_accuracy = 0.8221 clears the minimum 0.8000, but its lower 95% confidence bound
      0.7801 does not (interval [0.7801, 0.8641]; evaluation.confidence)`. A point estimate that fails its
      threshold is TFMA's reason already, and is not repeated.
    """
    reasons = []
    for name, (value, low, high) in sorted(bounded.items()):
        base, _, cls = name.partition("@")
        gate = thresholds.get(base)
        if not gate or (cls and gate.get("classes") and cls not in {str(c) for c in gate["classes"]}):
            continue
        shown = level_text(level)
        interval = f"(interval [{low:.4f}, {high:.4f}]; evaluation.confidence)"
        named = f"{name} on {where}" if where else name
        if gate.get("min") is not None and value >= gate["min"] > low:
            reasons.append(
                f"{named} = {value:.4f} clears the minimum {gate['min']:.4f}, but its lower {shown} confidence "
                f"bound {low:.4f} does not {interval}"
            )
        if gate.get("max") is not None and value <= gate["max"] < high:
            reasons.append(
                f"{named} = {value:.4f} clears the maximum {gate['max']:.4f}, but its upper {shown} confidence "
                f"bound {high:.4f} does not {interval}"
            )
    return reasons


def interval_text(confidence: Mapping[str, Any]) -> str:
    """`Confidence (95%): binary_accuracy 0.8221 [0.7801, 0.8641]`: the gated metrics' intervals, or ''."""
    level, bounded = confidence.get("level"), confidence.get("intervals") or {}
    names = [name for name in confidence.get("gated") or [] if name in bounded]
    if not level or not names:
        return ""
    cells = ", ".join(f"{n} {bounded[n][0]:.4f} [{bounded[n][1]:.4f}, {bounded[n][2]:.4f}]" for n in names)
    return f"Confidence ({level_text(level)}): {cells}"


def level_text(level: float) -> str:
    """0.95 -> `95%`, 0.975 -> `97.5%`."""
    return f"{level:.0%}" if round(level * 100, 6).is_integer() else f"{level:.1%}"
