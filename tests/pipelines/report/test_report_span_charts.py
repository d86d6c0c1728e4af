"""The report's charts across spans: the drift bars with the limit, and the blessed metrics by span."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from pipelines.report.charts import drift_bars_svg
from pipelines.report.collect import ReportData, RunFacts
from pipelines.report.dag import layout
from pipelines.report.render import render
from pipelines.report.span_history import SpanDrift, SpanMetrics

SVG = "{http://www.w3.org/2000/svg}"


def _bars(svg: str) -> list[str]:
    """The fill colours of the chart's bars (matplotlib's patches, in drawing order)."""
    root = ElementTree.fromstring(svg)
    fills = []
    for group in root.iter(f"{SVG}g"):
        if (group.get("id") or "").startswith("patch_") and group.get("id") != "patch_1":
            for path in group.iter(f"{SVG}path"):
                style = path.get("style") or ""
                fills += [part.split(":")[1].strip() for part in style.split(";") if part.strip().startswith("fill:")]
    return fills


def test_drift_bars_over_the_limit_are_red_and_the_limit_is_drawn():
    svg = drift_bars_svg([("1→2", 0.05), ("2→3", 0.4)], 0.3)
    assert svg.startswith("<svg")
    fills = _bars(svg)
    assert "#1f77b4" in fills and "#d62728" in fills
    assert "limit 0.3" in svg and "1→2" in svg and "2→3" in svg


def test_drift_bars_without_a_limit_draw_no_line():
    svg = drift_bars_svg([("1→2", 0.05)], None)
    assert "limit" not in svg and "#d62728" not in _bars(svg)


def _data(**fields) -> ReportData:
    run = RunFacts("run-b", "succeeded", 1.0, "", ["ExampleGen"], {"ExampleGen": []})
    return ReportData("p", run, layout(run.order, run.upstream, {}, {}), **fields)


def test_the_report_draws_both_span_charts_and_their_tables():
    html = render(
        _data(
            span_metrics=[
                SpanMetrics(1, "run-a", [1], {"auc": 0.8, "loss": 0.5}, ["auc"]),
                SpanMetrics(2, "run-b", [1, 2], {"auc": 0.84, "loss": 0.45}, ["auc"]),
            ],
            span_drift=[SpanDrift(1, 2, "payment_type", 0.12)],
            drift_limit=0.3,
        )
    )
    section = html[html.index('<h2 id="spans">') :]
    assert 'id="span-metrics-chart"' in section and 'id="span-drift-chart"' in section
    table = section[section.index('<table id="span-metrics">') : section.index("</table>")]
    assert "<th>auc</th>" in table and "<th>loss</th>" not in table  # the gated metric only
    assert '<tr data-span="2"><td class="num">2</td><td>1, 2</td><td>run-b</td><td class="num">0.84</td>' in table
    drift = section[section.index('<table id="span-drift">') :]
    assert '<td>1 → 2</td><td>payment_type</td><td class="num">0.1200</td><td class="num">0.3</td>' in drift


def test_a_report_without_spans_has_no_spans_section():
    assert 'id="spans"' not in render(_data())


def test_the_metrics_chart_ticks_whole_spans_only():
    html = render(_data(span_metrics=[SpanMetrics(s, f"r{s}", [s], {"auc": 0.8 + s / 100}, ["auc"]) for s in (1, 2)]))
    chart = html[html.index('id="span-metrics-chart"') : html.index("</svg>", html.index('id="span-metrics-chart"'))]
    ticks = [text.split(">")[-1] for text in chart.split("</text>")[:-1]]
    assert "1.5" not in ticks and "1" in ticks and "2" in ticks, ticks
