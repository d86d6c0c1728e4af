"""What changed between two runs: the spec text, the data files, the code, the metrics, which components re-ran."""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

from pipelines.history.mlmd_runs import RunInfo
from pipelines.history.slices import slice_deltas

__all__ = ["RunDiff", "diff_runs"]


@dataclasses.dataclass
class RunDiff:
    """Run B against run A. `spec_diff` is a unified diff (empty: same text; None: a run has no record)."""

    run_a: str
    run_b: str
    spec_diff: list[str] | None
    data_changes: list[dict[str, Any]]
    input_fingerprint: tuple[str | None, str | None]
    code_changed: bool | None
    metrics: list[dict[str, Any]]
    components: list[dict[str, str]]
    reran: list[str]
    blessed: tuple[bool | None, bool | None]
    pushed_version: tuple[str | None, str | None]
    notes: list[str] = dataclasses.field(default_factory=list)
    # `evaluation.slices`: per slice and metric, A, B and B-A (`history.slices.slice_deltas`).
    slice_metrics: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


def _data_changes(files_a: dict[str, dict], files_b: dict[str, dict]) -> list[dict[str, Any]]:
    changes = []
    for path in sorted(set(files_a) | set(files_b)):
        before, after = files_a.get(path), files_b.get(path)
        if before == after:
            continue
        change = "added" if before is None else "removed" if after is None else "changed"
        changes.append({"path": path, "change": change, "a": before, "b": after})
    return changes


def _metric_rows(metrics_a: dict[str, float], metrics_b: dict[str, float]) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(set(metrics_a) | set(metrics_b)):
        a, b = metrics_a.get(name), metrics_b.get(name)
        delta = round(b - a, 4) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
        rows.append({"name": name, "a": a, "b": b, "delta": delta})
    return rows


def diff_runs(a: RunInfo, b: RunInfo) -> RunDiff:
    """Compares run `b` with run `a`.

    Args:
        a: the earlier (or reference) run.
        b: the run to compare with it.

    Returns:
        A `RunDiff`; what a run without a record cannot say is None, with a note.
    """
    notes = []
    spec_diff = data_changes = code_changed = None
    if a.record and b.record:
        spec_diff = list(
            difflib.unified_diff(
                a.record.spec_text.splitlines(),
                b.record.spec_text.splitlines(),
                fromfile=f"{a.run_id} {a.record.spec_file}",
                tofile=f"{b.run_id} {b.record.spec_file}",
                lineterm="",
            )
        )
        data_changes = _data_changes(a.record.data_files, b.record.data_files)
        code_changed = a.record.code_fingerprint != b.record.code_fingerprint
    else:
        missing = ", ".join(run.run_id for run in (a, b) if run.record is None)
        notes.append(
            f"no run record for {missing} (a run from before run records were kept): the spec text, data files and "
            "code fingerprint cannot be compared; the ExampleGen input fingerprint below still can."
        )
    status_a = {c.component_id: c.status for c in a.components}
    status_b = {c.component_id: c.status for c in b.components}
    order = [c.component_id for c in b.components] + [c for c in status_a if c not in status_b]
    components = [{"component": c, "a": status_a.get(c, "-"), "b": status_b.get(c, "-")} for c in order]
    return RunDiff(
        run_a=a.run_id,
        run_b=b.run_id,
        spec_diff=spec_diff,
        data_changes=data_changes if data_changes is not None else [],
        input_fingerprint=(a.input_fingerprint, b.input_fingerprint),
        code_changed=code_changed,
        metrics=_metric_rows(a.summary.get("metrics") or {}, b.summary.get("metrics") or {}),
        components=components,
        reran=[c.component_id for c in b.components if c.status == "executed"],
        blessed=(a.summary.get("blessed"), b.summary.get("blessed")),
        pushed_version=(a.pushed_version, b.pushed_version),
        notes=notes,
        slice_metrics=slice_deltas(a.summary, b.summary),
    )
