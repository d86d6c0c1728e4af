"""Spans in a data path: TFX's `{SPAN}`, `{VERSION}` and date-spec placeholders, listed with TFX's semantics.

A `data.path` such as `data/span-{SPAN}/*.csv` or `exports/{YYYY}-{MM}-{DD}/*.csv` names a series of
spans (TFX's term for one delivery of data); `{VERSION}` names re-deliveries of a span, the highest
version winning. ExampleGen ingests one span per execution (TFX's driver with a static `RangeConfig`),
and its Examples artifact carries the `span` and `version` properties.

Example:
    >>> split_span_path("/data/span-{SPAN:2}/*.csv")
    ('/data', 'span-{SPAN:2}/*.csv')
"""

from __future__ import annotations

import dataclasses
import os
import re

from compat.tfx import spans as tfx_spans
from components.common.data_files import keep_data_files

__all__ = [
    "Span",
    "has_span_spec",
    "has_span_number",
    "split_span_path",
    "list_spans",
    "missing_spans",
    "static_range",
    "window_examples",
    "stamp_span",
]

# TFX's placeholders (tfx/components/example_gen/utils.py: SPAN_FULL_REGEX, DATE_SPECS, VERSION_FULL_REGEX),
# spelled here so that telling a span path costs no TFX import.
_SPEC = re.compile(r"\{SPAN(:[^}]*)?\}|\{YYYY\}|\{MM\}|\{DD\}|\{VERSION(:[^}]*)?\}")
_SPAN_NUMBER = re.compile(r"\{SPAN(:[^}]*)?\}")
_GLOB_CHARS = re.compile(r"[*?\[]")


@dataclasses.dataclass(frozen=True)
class Span:
    """One span: its number (days since 1970 for the date spec), newest version (None without `{VERSION}`),
    that version's files, and its name as the path spells it (the `{SPAN}` text, or YYYY-MM-DD)."""

    number: int
    version: int | None
    files: tuple[str, ...]
    label: str

    def describe(self) -> str:
        """`span 3` / `span 2016-01-01`, with `(version 2)` where the path has `{VERSION}`."""
        return f"span {self.label}" + (f" (version {self.version})" if self.version is not None else "")


def has_span_spec(path: str) -> bool:
    """Whether `path` holds one of TFX's span, date or version placeholders."""
    return bool(_SPEC.search(path))


def has_span_number(text: str) -> bool:
    """Whether `text` holds TFX's `{SPAN}` (or `{SPAN:N}`) placeholder."""
    return bool(_SPAN_NUMBER.search(text))


def split_span_path(path: str) -> tuple[str, str]:
    """(input_base, pattern): the folders before the first placeholder or wildcard, and the rest.

    ExampleGen matches `pattern` under `input_base`, as TFX's split patterns are relative to it.
    """
    parts = path.split(os.sep)
    for index, part in enumerate(parts):
        if _SPEC.search(part) or _GLOB_CHARS.search(part):
            return os.sep.join(parts[:index]) or os.sep, os.sep.join(parts[index:])
    return os.path.dirname(path), os.path.basename(path)


def list_spans(path: str) -> list[Span]:
    """Every span `path` matches, oldest first, each at its newest version.

    Files whose names `validate` skips (hidden files) are left out; a span with only such files is not listed.

    Raises:
        ValueError: TFX refuses the pattern (a placeholder twice, `{VERSION}` without a span, a width that
            is not a positive number, a matched name whose span or version is not a number).
    """

    input_base, pattern = split_span_path(path)
    if not tfx_spans.fits():
        return _newest_span_only(input_base, pattern)
    newest: dict[int, tuple[int | None, str, list[str]]] = {}
    for number, version, files, label in tfx_spans.matched_spans(input_base, pattern):
        files = keep_data_files(files)
        if not files:
            continue
        kept = newest.get(number)
        if kept is None or (version is not None and kept[0] is not None and version > kept[0]):
            newest[number] = (version, label, list(files))
        elif kept[0] == version:
            kept[2].extend(files)
    return [Span(n, v, tuple(sorted(f)), label) for n, (v, label, f) in sorted(newest.items())]


def _newest_span_only(input_base: str, pattern: str) -> list[Span]:
    """TFX's own public answer: the newest span alone (what ExampleGen ingests without a range)."""
    from tfx.components.example_gen import utils
    from tfx.dsl.io import fileio
    from tfx.proto import example_gen_pb2

    split = example_gen_pb2.Input.Split(name="single_split", pattern=pattern)
    _, span, version = utils.calculate_splits_fingerprint_span_and_version(input_base, [split])
    files = keep_data_files(fileio.glob(os.path.join(input_base, split.pattern)))
    return [Span(span, version, tuple(files), str(span))] if files else []


def missing_spans(spans: list[Span]) -> list[int]:
    """The span numbers between the oldest and newest listed span that are not listed."""
    if not spans:
        return []
    present = {span.number for span in spans}
    return [n for n in range(spans[0].number, spans[-1].number + 1) if n not in present]


def static_range(span: int):
    """TFX's `RangeConfig` that makes ExampleGen's driver ingest span `span` (and no other)."""
    from tfx.proto import range_config_pb2

    return range_config_pb2.RangeConfig(
        static_range=range_config_pb2.StaticRange(start_span_number=span, end_span_number=span)
    )


def window_examples(examples, window: int):
    """The newest `window` spans ExampleGen ingested, newest version of each (TFX's `rolling_range`
    resolver function); `examples`, ExampleGen's own output channel, itself when `window` is 1.

    The window reads ExampleGen's Examples from every run of the pipeline (a span ingested by an earlier
    run, or by this run's ingest-only pass, counts), not only this run's: the consumer must also
    `add_upstream_node(examples.producer_component)` to run after it. A re-ingested (backfilled) span
    replaces its older examples (the newest version, then the newest artifact, wins).
    """
    if window == 1:
        return examples
    from tfx.dsl.input_resolution import canned_resolver_functions
    from tfx.types import Channel, standard_artifacts

    every_run = Channel(
        type=standard_artifacts.Examples,
        producer_component_id=examples.producer_component_id,
        output_key=examples.output_key,
    )
    # min_spans=1: the first runs, with fewer spans than the window, train on the spans there are.
    return canned_resolver_functions.rolling_range(every_run, num_spans=window, min_spans=1)


def stamp_span(examples, exec_properties) -> None:
    """Sets the Examples artifacts' `span` and `version` properties from the ExampleGen driver's choice.

    TFX's driver records them as custom properties only, while TFX's span resolver functions
    (`rolling_range`, `window_examples`) and StatisticsGen read the artifact properties, which then stay 0.
    Nothing is set for an ExampleGen without spans (the driver's span is 0 there).
    """
    span = exec_properties.get("span")
    if not span:
        return
    version = exec_properties.get("version")
    for artifact in examples:
        artifact.span = int(span)
        artifact.version = int(version) if version is not None else 0
