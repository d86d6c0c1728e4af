"""TFX's file matching for `{SPAN}`, `{VERSION}` and the date spec, for listing every span of a pattern.

What: calls `tfx.components.example_gen.utils._create_matching_glob_and_regex` (the glob and the capturing
regex TFX builds from a split pattern) and `_find_matched_span_version_from_path` (a matched file's span and
version, the date spec mapped to days since 1970).

Why: a scheduled run ingests every span that arrived since the last run, so it needs all the spans a
pattern matches, with TFX's own semantics (width modifiers, greedy matching, the date spec). TFX's public
`calculate_splits_fingerprint_span_and_version` returns only the newest span (or one static range).

Pinned: tfx `compat.tfx.PINNED`. Shape check (`ENTRY`, `fits()`): both functions exist with the
parameters used here; otherwise `spans()` falls back to TFX's public function and lists the newest span
only (one log line).
"""

from __future__ import annotations

import inspect

import compat

__all__ = ["ENTRY", "fits", "shape_problem", "matched_spans"]

ENTRY = "compat.tfx.spans"

_GLOB_PARAMETERS = ["uri", "split", "is_match_span", "is_match_date", "is_match_version", "range_config"]
_MATCH_PARAMETERS = ["file_path", "split_regex_pattern", "is_match_span", "is_match_date", "is_match_version"]


def shape_problem() -> str | None:
    """None when TFX's two matching helpers have the shape used here, else what differs."""
    from tfx.components.example_gen import utils

    for name, expected in (
        ("_create_matching_glob_and_regex", _GLOB_PARAMETERS),
        ("_find_matched_span_version_from_path", _MATCH_PARAMETERS),
    ):
        function = getattr(utils, name, None)
        if not callable(function):
            return f"example_gen.utils has no function `{name}`"
        parameters = list(inspect.signature(function).parameters)
        if parameters != expected:
            return f"{name} takes {parameters}, expected {expected}"
    return None


def fits() -> bool:
    """Whether `matched_spans` lists every span (False, after one log line: the newest span only)."""
    return compat.check_shape(ENTRY, shape_problem)


def matched_spans(uri: str, pattern: str) -> list[tuple[int, int | None, list[str], str]]:
    """Every file `pattern` (under `uri`) matches, as TFX's ExampleGen driver matches it.

    Args:
        uri: the folder the pattern is relative to (ExampleGen's `input_base`).
        pattern: a split pattern holding `{SPAN}` (or `{YYYY}`/`{MM}`/`{DD}`) and optionally `{VERSION}`.

    Returns:
        `(span, version, [file], span_tokens)` per matched file, `span_tokens` the matched text of the span
        (or "YYYY-MM-DD" of the date spec); version None without `{VERSION}`.

    Raises:
        ValueError: TFX's own errors for a pattern (a spec twice, `{VERSION}` without a span, a bad width,
            a file whose span is not a number).
    """
    from tfx.components.example_gen import utils
    from tfx.dsl.io import fileio
    from tfx.proto import example_gen_pb2

    split = example_gen_pb2.Input.Split(name="single_split", pattern=pattern)
    is_span, is_date, is_version = utils.verify_split_pattern_specs(split)
    glob, regex = utils._create_matching_glob_and_regex(uri, split, is_span, is_date, is_version, None)
    found = []
    for path in fileio.glob(glob):
        try:
            tokens, span, _, version = utils._find_matched_span_version_from_path(
                path, regex, is_span, is_date, is_version
            )
        except ValueError as error:  # TFX's message names the pattern, not the file
            raise ValueError(f"{path}: {error} (a placeholder's width or digits differ)") from None
        found.append((span, version, [path], "-".join(tokens or [])))
    return found
