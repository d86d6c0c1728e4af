"""The `evaluation:` section: metrics, slices and the thresholds a model must meet to be blessed."""

import dataclasses
from typing import Optional

from pipelines.spec.limits import check_finite
from pipelines.spec.typed import checked_field, field_problems

__all__ = ["ThresholdSpec", "FAIRNESS_RATES", "FairnessSpec", "EvaluationSpec"]


@dataclasses.dataclass(frozen=True)
class ThresholdSpec:
    """A gate on one metric: absolute bounds and/or the allowed regression
    against the last blessed model (`max_regression`, in the metric's units).
    `higher_is_better` defaults from the metric (losses and errors: false).
    `classes` (per-class `precision`/`recall` of a multi-class label): the
    classes the gate applies to, each scored as `precision@<class>`; default:
    every class. `per_slice: true`: the gate must also hold on every slice of
    `evaluation.slices` with at least `min_examples` eval rows (smaller slices
    are reported, never gated), against the bounds and against the last
    blessed model on the same slice."""

    min: Optional[float] = None
    max: Optional[float] = None
    max_regression: Optional[float] = None
    higher_is_better: Optional[bool] = None
    classes: Optional[list[str | int]] = None
    per_slice: bool = False
    min_examples: Optional[int] = None  # None: DEFAULT_SLICE_MIN_EXAMPLES, with `per_slice` only

    @property
    def slice_min_examples(self) -> int:
        """The fewest eval rows a slice needs to be gated by this threshold."""
        return DEFAULT_SLICE_MIN_EXAMPLES if self.min_examples is None else self.min_examples

    def __post_init__(self):
        if self.min is None and self.max is None and self.max_regression is None:
            raise ValueError("a threshold needs at least one of `min`, `max` or `max_regression`.")
        check_finite({"min": self.min, "max": self.max, "max_regression": self.max_regression})
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(
                f"`min` is above `max`: no value can pass. Expected min <= max. Received: min={self.min}, "
                f"max={self.max}. Swap them or fix the one that is wrong."
            )
        if self.max_regression is not None and self.max_regression < 0:
            raise ValueError(f"`max_regression` must be 0 or more. Received: max_regression={self.max_regression}.")
        if self.min_examples is not None and self.min_examples < 1:
            raise ValueError(
                f"`min_examples` must be at least 1. Received: min_examples={self.min_examples}. Example: "
                "`min_examples: 30`."
            )
        if self.min_examples is not None and not self.per_slice:
            raise ValueError(
                f"`min_examples` applies to per-slice gates only (the fewest eval rows a slice needs to be "
                f"gated). Received: min_examples={self.min_examples} without `per_slice: true`. Add "
                "`per_slice: true`, or remove `min_examples`."
            )


DEFAULT_SLICE_MIN_EXAMPLES = 30

FAIRNESS_RATES = ("false_positive_rate", "false_negative_rate", "positive_rate")


@dataclasses.dataclass(frozen=True)
class FairnessSpec:
    """Fairness Indicators for a binary label: error and positive rates per slice, and gates on their gaps.

    Each rate of `FAIRNESS_RATES` (false positive rate, false negative rate,
    positive rate: the share of rows scored positive) is computed on every
    slice of `evaluation.slices` at each score cut of `thresholds`, named
    `false_positive_rate@0.5`. `max_gap` bounds, per rate, the largest minus
    the smallest value over the slices of one slice spec that hold at least
    `min_examples` eval rows, at every cut: a wider gap is NOT BLESSED, named
    with the two slices (`max_gap: {false_positive_rate: 0.1}`).
    """

    thresholds: list[float] = dataclasses.field(default_factory=lambda: [0.5])
    max_gap: dict[str, float] = dataclasses.field(default_factory=dict)
    min_examples: int = 30

    def __post_init__(self):
        if not self.thresholds or any(not 0.0 < t < 1.0 for t in self.thresholds):
            raise ValueError(
                f"`thresholds` must list score cuts between 0 and 1 (exclusive). Received: thresholds="
                f"{list(self.thresholds)}. Example: `thresholds: [0.3, 0.5, 0.7]`."
            )
        for name, gap in self.max_gap.items():
            if name not in FAIRNESS_RATES:
                raise ValueError(
                    f"`max_gap` names `{name}`, which is no fairness rate. Expected one of: "
                    f"{', '.join(FAIRNESS_RATES)}. Example: `max_gap: {{false_positive_rate: 0.1}}`."
                )
            check_finite({f"max_gap.{name}": gap})
            if not 0.0 <= gap <= 1.0:
                raise ValueError(
                    f"`max_gap.{name}` is a difference of two rates, so it lies between 0 and 1. Received: {gap}. "
                    "Example: `max_gap: {false_positive_rate: 0.1}`."
                )
        if self.min_examples < 1:
            raise ValueError(
                f"`min_examples` must be at least 1. Received: min_examples={self.min_examples}. Example: "
                "`min_examples: 30`."
            )


def _confidence_problem(level: float) -> Optional[str]:
    if 0.5 <= level < 1.0:
        return None
    return (
        f"`confidence` is a confidence level, at least 0.5 and below 1. Received: confidence={level}. Example: "
        "`confidence: 0.95`, or null for no intervals."
    )


def _top_k_problem(k: int) -> Optional[str]:
    return None if k >= 1 else f"`top_k` must be at least 1. Received: top_k={k}. Example: `top_k: 3`."


def _sample_rows_problem(rows: int) -> Optional[str]:
    if rows >= 100:
        return None
    return (
        f"`sample_rows` must be at least 100 (fewer rows measure too little). Received: sample_rows={rows}. "
        "Example: `sample_rows: 20000`, or null to score every eval row."
    )


def _slice_buckets_problem(buckets: int) -> Optional[str]:
    if 2 <= buckets <= 100:
        return None
    return f"`slice_buckets` must be between 2 and 100. Received: slice_buckets={buckets}. Example: `slice_buckets: 4`."


def _slices_problem(specs) -> Optional[str]:
    seen: dict[frozenset, int] = {}
    for i, columns in enumerate(specs):
        if not columns or len(set(columns)) != len(columns):
            return (
                f"`slices[{i}]` must list one or more distinct columns. Received: {list(columns)}. Example: "
                "`slices: [[payment_type], [trip_start_hour, company]]`."
            )
        earlier = seen.setdefault(frozenset(columns), i)
        if earlier != i:
            return (
                f"`slices[{i}]` repeats `slices[{earlier}]` ({list(columns)}): each slice spec is computed once. "
                f"Remove `slices[{i}]`."
            )
    return None


@dataclasses.dataclass(frozen=True)
class EvaluationSpec:
    """Metrics computed on the eval split, and the blessing gate over them.

    With no `thresholds`, the model must beat a trivial baseline on the eval
    split: the majority class's share as `accuracy` (binary with `auc`: AUC
    above 0.5), or for regression the mean squared error of predicting the
    mean. `top_k` is the k of `top_k_accuracy`.

    Without `metrics` (or with `metrics: null`) the metrics fit the label: a
    binary label gets `binary_accuracy` and `auc`, a label of 3 or more classes
    `accuracy`, a regression label `mean_squared_error` and
    `mean_absolute_error` (`pipelines.spec.metrics.default_metrics`). The
    checked spec holds that list.

    `sample_rows` (null: every eval row) scores a deterministic sample of that
    many eval rows, spread evenly over the split: on large data the Evaluator
    is the slowest component, and its time grows with the rows it scores. A
    metric on a sample carries sampling error (accuracy near 0.9 on 10,000
    rows: one standard error 0.003), so gates with `max_regression` want a
    sample large enough for the difference they allow.

    `slices` (e.g. `[[payment_type], [trip_start_hour, company]]`): every
    metric is also computed per value of each listed column or cross of
    columns, with each slice's example count. A numeric column with more
    distinct values than `slice_buckets` is cut into that many quantile
    buckets of the eval split (`trip_start_hour=[6, 12)`).

    `fairness` (binary labels, with `slices`): Fairness Indicators' rates per
    slice and gates on the gaps between slices (`FairnessSpec`).

    `confidence` (e.g. 0.95; null: off) computes TFMA's confidence intervals
    (jackknife) and blesses only when the interval's bound clears each value
    threshold on the whole eval split, and on each slice a `per_slice`
    threshold gates: the lower bound a `min`, the upper bound a `max`.
    """

    metrics: Optional[list[str]] = None  # None: the metrics that fit the label (see above)
    thresholds: dict[str, ThresholdSpec] = dataclasses.field(default_factory=dict)
    top_k: int = checked_field(_top_k_problem, default=3)
    sample_rows: Optional[int] = checked_field(_sample_rows_problem, default=None)
    slices: list[list[str]] = checked_field(_slices_problem, default_factory=list)
    slice_buckets: int = checked_field(_slice_buckets_problem, default=4)
    fairness: Optional[FairnessSpec] = None
    confidence: Optional[float] = checked_field(_confidence_problem, default=None)

    def __post_init__(self):
        problems = field_problems(self)
        if problems:
            raise ValueError(" ".join(problems))
