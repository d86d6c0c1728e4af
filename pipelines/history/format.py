"""Terminal text for `runs`, `runs show` and `runs diff` (tables by tabulate)."""

from __future__ import annotations

import os

from tabulate import tabulate

from components.evaluator.confidence import interval_text
from components.evaluator.fairness import fairness_lines
from pipelines.history.diff import RunDiff
from pipelines.history.mlmd_runs import RunInfo
from pipelines.history.slices import slice_deltas_text, slices_text
from pipelines.history.span_tables import spans_text
from pipelines.outcome.summary import tuning_line

__all__ = [
    "format_runs",
    "format_run",
    "format_diff",
    "blessing_cell",
    "blessing_text",
    "components_text",
    "metrics_text",
]


def blessing_text(summary: dict) -> str:
    """`yes`, `no (why)` or `-` when the run evaluated nothing."""
    if summary.get("blessed") is None:
        return "-"
    reasons = "; ".join(summary.get("reasons") or [])
    return "yes" if summary["blessed"] else f"no ({reasons})" if reasons else "no"


def blessing_cell(summary: dict, width: int = 60) -> str:
    """`blessing_text` for the runs table: the first reason, cut to `width` characters, and how many more."""
    if summary.get("blessed") is None:
        return "-"
    if summary["blessed"]:
        return "yes"
    reasons = summary.get("reasons") or []
    if not reasons:
        return "no"
    first = reasons[0] if len(reasons[0]) <= width else reasons[0][: width - 3] + "..."
    more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return f"no: {first}{more}"


def _yes_no(blessed: bool | None) -> str:
    return "-" if blessed is None else "yes" if blessed else "no"


def components_text(run: RunInfo) -> str:
    """`3 ran, 7 cached` (and `1 failed`)."""
    counts: dict[str, int] = {}
    for component in run.components:
        counts[component.status] = counts.get(component.status, 0) + 1
    words = {"executed": "ran"}
    return ", ".join(f"{n} {words.get(status, status)}" for status, n in counts.items())


def metrics_text(summary: dict) -> str:
    """`auc=0.93 binary_accuracy=0.87`, or `-`."""
    metrics = summary.get("metrics") or {}
    return " ".join(f"{k}={v}" for k, v in sorted(metrics.items())) or "-"


def format_runs(runs: list[RunInfo]) -> str:
    """The runs table, newest first."""
    if not runs:
        return "No runs in ML Metadata yet."
    with_spans = any(run.ingested_spans or run.trained_spans for run in runs)
    rows = [
        [
            run.run_id,
            f"{run.seconds:.1f}s",
            run.status,
            *((spans_text(run.ingested_spans), spans_text(run.trained_spans)) if with_spans else ()),
            components_text(run),
            blessing_cell(run.summary),
            metrics_text(run.summary),
            run.pushed_version or "-",
        ]
        for run in runs
    ]
    spans = ["INGESTED", "TRAINED ON"] if with_spans else []
    headers = ["RUN", "TOOK", "STATUS", *spans, "COMPONENTS", "BLESSED", "METRICS", "PUSHED"]
    return tabulate(rows, headers=headers, tablefmt="plain")


def format_run(run: RunInfo, report: str | None, across_spans: list[str] | None = None) -> str:
    """One run in detail: components, their outputs, blessing, metrics, pushed version, record and report.

    `across_spans`: with spans, `span_tables.across_spans_text` of the root (shown after the run's metrics).
    """
    summary = run.summary
    lines = [f"Run {run.run_id} of {run.pipeline}: {run.status}, started {run.started}, took {run.seconds:.1f}s"]
    if run.ingested_spans or run.trained_spans:
        lines.append(f"Spans: ingested {spans_text(run.ingested_spans)}; trained on {spans_text(run.trained_spans)}")
    lines += [f"Blessed: {blessing_text(summary)}", f"Metrics: {metrics_text(summary)}"]
    if summary.get("changes"):
        lines.append(
            "Against the baseline: " + " ".join(f"{k} {v:+.4f}" for k, v in sorted(summary["changes"].items()))
        )
    if interval_text(summary.get("confidence") or {}):
        lines.append(interval_text(summary.get("confidence") or {}))
    lines.extend(slices_text(summary))
    lines.extend(fairness_lines(summary.get("fairness") or []))
    if across_spans:
        lines += [*across_spans, ""]
    if summary.get("tuning"):
        lines.append(tuning_line(summary["tuning"]))
    pushed = summary.get("pushed_path")
    lines.append(f"Pushed: version {run.pushed_version} at {pushed}" if run.pushed_version else "Pushed: nothing")
    if run.record:
        lines.append(f"Spec: {run.record.spec_file}")
        lines.extend(f"Data: {path} ({info['size']} bytes)" for path, info in run.record.data_files.items())
        lines.append(f"Code fingerprint: {run.record.code_fingerprint[:16]}")
    elif run.metadata:
        lines.append(f"Spec and data files: not recorded in the cluster's ML Metadata ({run.metadata})")
    else:
        lines.append("Spec and data files: not recorded (a run from before run records were kept)")
    if run.input_fingerprint:
        lines.append(f"ExampleGen input: {run.input_fingerprint}")
    if report and os.path.isfile(report):
        lines.append(f"Report: {report}")
    rows = [[c.component_id, c.status, f"{c.seconds:.1f}s", c.execution_id] for c in run.components]
    lines += ["", tabulate(rows, headers=["COMPONENT", "STATUS", "TOOK", "EXECUTION"], tablefmt="plain"), ""]
    artifacts = [[c.component_id, a.key, a.type, a.uri] for c in run.components for a in c.outputs]
    lines.append(tabulate(artifacts, headers=["COMPONENT", "OUTPUT", "TYPE", "URI"], tablefmt="plain"))
    return "\n".join(lines)


def _value(value) -> str:
    return "-" if value is None else str(value)


def format_diff(diff: RunDiff) -> str:
    """Run B against run A: spec diff, data, code, metrics, components."""
    lines = [f"A: {diff.run_a}", f"B: {diff.run_b}", *(f"Note: {note}" for note in diff.notes), ""]
    if diff.spec_diff is not None:
        lines += ["Spec:", *(diff.spec_diff or ["  (no change)"]), ""]
    lines.append("Data:")
    for change in diff.data_changes:
        lines.append(f"  {change['change']}: {change['path']} ({_file(change['a'])} -> {_file(change['b'])})")
    before, after = diff.input_fingerprint
    if before != after:
        lines.append(f"  ExampleGen input fingerprint: {before} -> {after}")
    if not diff.data_changes and before == after:
        lines.append("  (no change)")
    if diff.code_changed is not None:
        lines.append(f"Code: {'changed' if diff.code_changed else 'no change'}")
    lines += ["", "Metrics:"]
    rows = [[m["name"], _value(m["a"]), _value(m["b"]), _delta(m["delta"])] for m in diff.metrics]
    lines.append(tabulate(rows, headers=["METRIC", "A", "B", "B-A"], tablefmt="plain") if rows else "  (none)")
    lines.extend(slice_deltas_text(diff.slice_metrics))
    lines.append(f"Blessed: {_yes_no(diff.blessed[0])} -> {_yes_no(diff.blessed[1])}")
    lines.append(f"Pushed version: {_value(diff.pushed_version[0])} -> {_value(diff.pushed_version[1])}")
    lines += ["", f"Re-ran in B: {', '.join(diff.reran) or 'nothing'}"]
    rows = [[c["component"], c["a"], c["b"]] for c in diff.components]
    lines.append(tabulate(rows, headers=["COMPONENT", "A", "B"], tablefmt="plain"))
    return "\n".join(lines)


def _file(info: dict | None) -> str:
    return "absent" if info is None else f"{info['size']} bytes, mtime {info['mtime_ns']}"


def _delta(delta) -> str:
    return "-" if delta is None else f"{delta:+.4f}"
