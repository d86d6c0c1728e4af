"""`slices_view`: the report's slices page from a run's per-slice rows."""

from __future__ import annotations

from pipelines.report.slices import slices_view
from pipelines.spec.models import ThresholdSpec

ROWS = [
    {"slice": "region=A", "example_count": 120, "metrics": {"accuracy": 0.93, "loss": 2.5}, "gated": ["accuracy"]},
    {"slice": "region=C", "example_count": 60, "metrics": {"accuracy": 0.55, "loss": 4.0}, "gated": ["accuracy"]},
    {"slice": "region=D", "example_count": 9, "metrics": {"accuracy": 0.40, "loss": 5.0}, "gated": []},
]


def test_every_sort_order_holds_every_slice():
    view = slices_view(ROWS, {"accuracy": ThresholdSpec(min=0.8, per_slice=True)})

    assert list(view.orders) == ["slice", "rows", "accuracy", "loss"]
    assert [r["slice"] for r in view.orders["accuracy"]] == ["region=D", "region=C", "region=A"]
    assert [r["slice"] for r in view.orders["rows"]] == ["region=A", "region=C", "region=D"]


def test_a_gated_slice_below_the_bound_fails_and_a_small_one_is_only_shown():
    view = slices_view(ROWS, {"accuracy": ThresholdSpec(min=0.8, per_slice=True)})

    chart = view.charts[0]
    assert (chart.metric, chart.bound, chart.bound_kind, chart.bound_at) == ("accuracy", 0.8, "min", 80.0)
    assert [(b.slice, b.failed, b.gated) for b in chart.bars] == [
        ("region=A", False, True),
        ("region=C", True, True),
        ("region=D", False, False),
    ]
    assert chart.bars[0].width == 93.0


def test_an_unbounded_metric_is_scaled_to_its_largest_value():
    (_, loss) = slices_view(ROWS, {}).charts

    assert loss.bound is None and loss.bound_at is None
    assert max(b.width for b in loss.bars) < 100 and loss.bars[2].width > loss.bars[0].width


def test_a_run_without_slices_has_no_slices_page():
    assert slices_view([], {}) is None


def _gap(metric, gap, max_gap, breach):
    return {
        "metric": metric,
        "rate": metric.split("@")[0],
        "cut": 0.5,
        "slices": ["region"],
        "high": "region=C",
        "low": "region=A",
        "high_value": 0.5,
        "low_value": 0.5 - gap,
        "gap": gap,
        "max_gap": max_gap,
        "breach": breach,
    }


def test_fairness_gaps_come_breached_first_then_gated_then_the_rest():
    gaps = [
        _gap("false_negative_rate@0.5", 0.4, None, False),
        _gap("positive_rate@0.5", 0.05, 0.2, False),
        _gap("false_positive_rate@0.5", 0.3, 0.1, True),
    ]

    view = slices_view(ROWS, {}, gaps)

    assert [g["metric"] for g in view.fairness] == [
        "false_positive_rate@0.5",
        "positive_rate@0.5",
        "false_negative_rate@0.5",
    ]
    assert slices_view(ROWS, {}).fairness == []


def test_with_confidence_each_slice_value_shows_its_interval_in_the_page():
    from pipelines.report.collect import ReportData, RunFacts
    from pipelines.report.dag import layout
    from pipelines.report.render import render

    rows = [
        {**ROWS[0], "intervals": {"accuracy": [0.93, 0.8812, 0.9788]}},
        {**ROWS[1], "intervals": {"accuracy": [0.55, 0.4211, 0.6789], "loss": [4.0, 3.5, 4.5]}},
        ROWS[2],
    ]
    run = RunFacts("2026-11-24T00:00:00", "succeeded", 1.0, "/logs/run.log", ["A"], {})
    data = ReportData("taxi", run, layout(run.order, run.upstream, {"A": "executed"}, {}), slices=rows)
    html = render(data)
    table = html.split('data-sort="slice"', 1)[1].split("</table>", 1)[0]

    assert slices_view(rows, {}).bounded and not slices_view(ROWS, {}).bounded
    assert 'data-metric="accuracy">0.93 <span class="interval">[0.8812, 0.9788]</span></td>' in table
    assert 'data-metric="loss">4 <span class="interval">[3.5, 4.5]</span></td>' in table
    assert 'data-metric="accuracy">0.4</td>' in table  # a row without intervals: the value alone
    assert "followed by its confidence interval" in html
