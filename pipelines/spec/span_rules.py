"""`data.path` with spans (`{SPAN}`, `{VERSION}`, `{YYYY}`/`{MM}`/`{DD}`): which files a check reads.

A query with `{SPAN}` (`sql_spans`) is exported to such a path, and checked the same way.

A span path is checked on its newest span (the data a run ingests next): the columns, types and label
classes the spec relies on come from it, so a new span that breaks the spec stops the run at `validate`.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.example_gen.spans import Span, list_spans, missing_spans
from pipelines.profiling.data_checks import DataProblem, list_data_files
from pipelines.spec.errors import SpecProblem

__all__ = ["newest_span_files", "describe_spans", "rule_window", "rule_spans_on_target"]


def newest_span_files(path: str, data_format: str | None) -> tuple[tuple[Span, ...], list[str], str]:
    """(every span, the newest span's files, their format) for a span path.

    Raises:
        DataProblem: TFX refuses the pattern, nothing matches it, the format is an image folder, or the
            newest span's files are of different or unknown formats.
    """
    if data_format == "image_folder":
        raise DataProblem(
            f"{path}: spans (`{{SPAN}}`, `{{YYYY}}`...) are read from CSV or TFRecord files. Received: "
            "`format: image_folder`. Point `data.path` at one image folder, without placeholders."
        )
    try:
        spans = list_spans(path)
    except ValueError as error:
        raise DataProblem(
            f"{path}: TFX cannot match spans with this pattern: {error}. Expected one `{{SPAN}}` (or "
            "`{YYYY}`, `{MM}` and `{DD}`), optionally one `{VERSION}`, each matching digits in the file or "
            "folder names. Fix `data.path` or the names."
        ) from None
    if not spans:
        raise DataProblem(
            f"no file matches {path}. Expected at least one span, e.g. data/span-1/part.csv for "
            "data/span-{SPAN}/*.csv. Fix `data.path` (relative paths start at the spec file's folder) or add "
            "the first span."
        )
    newest = spans[-1]
    formats = {list_data_files(f, data_format)[1] for f in newest.files}
    if len(formats) > 1:
        raise DataProblem(
            f"{newest.describe()} of {path} holds files of several formats ({', '.join(sorted(formats))}). "
            "Expected one format per span. Add `format:` under `data:`, or narrow the pattern (e.g. `*.csv`)."
        )
    return tuple(spans), list(newest.files), formats.pop()


def describe_spans(spans: tuple[Span, ...] | list[Span]) -> str:
    """One line for `validate`: how many spans, the newest, and the gaps between the oldest and newest."""
    if not spans:
        return "no spans"
    missing = missing_spans(list(spans))
    gaps = "no gaps"
    if missing:
        shown = ", ".join(str(n) for n in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        gaps = f"{len(missing)} missing: {shown}"
    return f"{len(spans)} span(s), newest {spans[-1].describe()}, oldest span {spans[0].label}; {gaps}"


def rule_window(ctx) -> Iterator[SpecProblem]:
    """`data.window` above 1 needs spans in `data.path` or `data.sql` (a window counts spans)."""
    data = ctx.spec.data
    window = data.window
    if window > 1 and not data.has_spans and data.sql is not None:
        yield ctx.problem(
            "data.window",
            f"`window: {window}` reads the newest {window} spans, and `data.sql` has no `{{SPAN}}`. Expected "
            "`{SPAN}` in `sql` (e.g. `WHERE year = {SPAN}`) with `spans_sql` listing the spans. Received: a query "
            "without spans. Add `{SPAN}` and `spans_sql`, or remove `window`.",
        )
    elif window > 1 and not data.has_spans:
        yield ctx.problem(
            "data.window",
            f"`window: {window}` reads the newest {window} spans, and `data.path` names no spans. Expected "
            f"`{{SPAN}}` (or `{{YYYY}}`/`{{MM}}`/`{{DD}}`) in `data.path`. Received: path={data.path}. "
            "Put the span placeholder in `data.path` (e.g. data/span-{SPAN}/*.csv), or remove `window`.",
        )


def rule_spans_on_target(ctx) -> Iterator[SpecProblem]:
    """The window and the drift between spans need resolvers that the airflow and kubeflow targets cannot run.

    TFX's Airflow launcher resolves a component's inputs with `get_individual_channels`, which refuses the
    rolling window's resolved channel; TFX's KFP v2 compiler takes single channels only (no window) and
    compiles only `LatestArtifactStrategy` and `LatestBlessedModelStrategy` (not the previous span's statistics).
    """
    spec = ctx.spec
    target = spec.orchestrator.target
    if not spec.data.has_spans:
        return
    if spec.data.window > 1 and target in ("airflow", "kubeflow"):
        yield ctx.problem(
            "data.window",
            f"the {target} target trains on the newest span alone: TFX's {_RUNS_ON[target]} cannot resolve a "
            f"window of spans. Expected `window: 1` for `orchestrator.target: {target}`. Received: "
            f"window={spec.data.window}. Remove `window`, or run the spec with the beam or local target, which "
            "read the newest spans of every run.",
        )
    if spec.data.checks.drift and target == "kubeflow":
        yield ctx.problem(
            "data.checks.drift",
            "with spans, `drift` compares the new span with the previous one, found by a resolver that TFX's KFP v2 "
            "compiler cannot compile (it takes LatestArtifactStrategy and LatestBlessedModelStrategy only). "
            f"Expected no `drift` for `orchestrator.target: kubeflow`. Received: drift={spec.data.checks.drift}. "
            "Remove `drift` under `data.checks`, or check drift between spans on the airflow, beam or local target.",
        )


_RUNS_ON = {"airflow": "Airflow launcher (one run's inputs)", "kubeflow": "KFP v2 compiler (single channels)"}
