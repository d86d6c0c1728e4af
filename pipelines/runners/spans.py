"""Which spans a run ingests: the listed spans ML Metadata has no Examples for, or the one `--span N` names.

Each ingested span is one ExampleGen execution whose Examples artifact carries TFX's `span` and `version`
properties; this module reads them back, so a span already ingested is never read again, and runs
ExampleGen and StatisticsGen alone for the spans a run ingests but does not train on.
"""

from __future__ import annotations

import dataclasses
import os

from components.example_gen.spans import Span
from pipelines.compiler import compile_ingest_pipeline
from pipelines.outcome.metadata_file import open_metadata
from pipelines.runners.local import run_pipeline
from pipelines.runners.progress import ProgressPrinter
from pipelines.spec import ResolvedSpec
from pipelines.spec.sql_spans import export_span

__all__ = ["SpanNotFound", "SpanPlan", "ingested_spans", "plan_spans", "export_backfilled_span", "ingest_only"]


class SpanNotFound(ValueError):
    """`run --span N` names a span that `data.path` does not match (or `data.spans_sql` does not list)."""


@dataclasses.dataclass(frozen=True)
class SpanPlan:
    """What a run ingests: `ingest_only` spans (ExampleGen and StatisticsGen alone, oldest first), then the
    newest span `train`, which the whole pipeline runs on (None: a backfill of an older span only)."""

    ingest_only: tuple[Span, ...]
    train: Span | None
    new: tuple[Span, ...]  # the spans ML Metadata had no Examples for

    def describe(self) -> str:
        """One line: the spans this run ingests, or that no new span arrived."""
        if not self.new:
            return "No new span"
        return "New span(s): " + ", ".join(span.describe() for span in self.new)


def ingested_spans(resolved: ResolvedSpec) -> dict[int, int | None]:
    """span -> newest ingested version, from ML Metadata ({} before a run).

    A span is ingested when ExampleGen published its Examples and StatisticsGen its statistics (LIVE
    artifacts with the span's `span` property). A run killed between the two left the Examples alone: that
    span is not counted, so the next run ingests it again, ExampleGen served from TFX's cache (the span's
    files are not read again) and its statistics computed, which drift checks of later spans compare with.
    """
    if not os.path.isfile(resolved.metadata_path):
        return {}
    store = open_metadata(resolved.metadata_path, readonly=True)
    examples = _live_span_versions(store, f"{resolved.name}.ExampleGen", "Examples")
    statistics = _live_span_versions(store, f"{resolved.name}.StatisticsGen", "ExampleStatistics")
    return {span: version for span, version in examples.items() if span in statistics}


def _live_span_versions(store, node: str, type_name: str) -> dict[int, int | None]:
    """span -> newest version (None without one) of the LIVE `type_name` artifacts with a `span` in node `node`'s
    context (its outputs: a node's inputs are in its context too, hence the type)."""
    from ml_metadata.proto import metadata_store_pb2

    context = store.get_context_by_type_and_name("node", node)
    if context is None:
        return {}
    found: dict[int, int | None] = {}
    for artifact in store.get_artifacts_by_context(context.id):
        if artifact.state != metadata_store_pb2.Artifact.LIVE or artifact.type != type_name:
            continue
        span = _int_property(artifact, "span")
        if span is None:
            continue
        version = _int_property(artifact, "version")
        if span not in found or (version is not None and (found[span] is None or version > found[span])):
            found[span] = version
    return found


def _int_property(artifact, name: str) -> int | None:
    """The artifact's `name` as ExampleGen's driver records it (a custom property), else its typed property."""
    if name in artifact.custom_properties:
        return artifact.custom_properties[name].int_value
    if name in artifact.properties:
        return artifact.properties[name].int_value
    return None


def plan_spans(resolved: ResolvedSpec, ingested: dict[int, int | None], backfill: int | None = None) -> SpanPlan:
    """The spans this run ingests.

    Without `backfill`: every listed span not yet ingested; the newest listed span is trained on when it is
    among them (the up-to-date check decides otherwise). With `backfill`: that span, at its newest version,
    whether ingested before or not; it is trained on only when it is the newest span.

    Raises:
        SpanNotFound: `backfill` is not a listed span (the message lists the spans there are).
    """
    spans = resolved.spans
    newest = spans[-1]
    if backfill is not None:
        chosen = next((span for span in spans if span.number == backfill), None)
        if chosen is None:
            listed = ", ".join(str(span.number) for span in spans[-10:])
            if resolved.spec.data.sql is not None:
                raise SpanNotFound(
                    f"--span {backfill}: `data.spans_sql` lists no such span. Expected one of the spans it lists "
                    f"(newest: {listed}). Received: {backfill}. Pick a listed span, or load its rows first."
                )
            raise SpanNotFound(
                f"--span {backfill}: {resolved.spec.data.path} has no such span. Expected one of the spans it "
                f"matches (newest: {listed}). Received: {backfill}. Pick a listed span, or add its files first."
            )
        if chosen is newest:
            return SpanPlan((), chosen, (chosen,))
        return SpanPlan((chosen,), None, (chosen,))
    new = tuple(span for span in spans if span.number not in ingested)
    return SpanPlan(tuple(span for span in new if span is not newest), newest, new)


def export_backfilled_span(resolved: ResolvedSpec, span: int) -> None:
    """`run --span N` on a query with `{SPAN}`: span N's rows are queried again (a backfill may be a corrected
    span); its export is replaced only when the rows changed, so an unchanged span stays cached in TFX.

    Raises:
        SqlProblem: the database refuses the connection, or the span's query fails or returns no rows.
    """
    data = resolved.spec.data
    if data.spanned_query:  # `validate` refused a root on an object store, where nothing is exported
        export_span(data.sql, data.connection, resolved.data_path, span)


def ingest_only(resolved: ResolvedSpec, span: Span, beam_args: tuple[str, ...], log_file: str, stream) -> bool:
    """Runs ExampleGen and StatisticsGen on `span` alone (its Examples and statistics land in ML Metadata).

    Returns:
        Whether ExampleGen read the span (False: TFX's cache had its Examples, the files unchanged).

    Raises:
        ComponentFailed: ExampleGen or StatisticsGen failed; nothing of the span is published.
    """

    print(f"Ingesting {span.describe()} ({len(span.files)} file(s)).", file=stream, flush=True)
    one_span = dataclasses.replace(resolved, ingest_span=span.number, data_files=span.files)
    result = run_pipeline(compile_ingest_pipeline(one_span, beam_args), log_file, hooks=[ProgressPrinter(stream)])
    return result.components[0].status == "executed"
