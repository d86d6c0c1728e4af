"""Reading, typing and checking pipeline specs (YAML files)."""

from __future__ import annotations

import dataclasses
import os

from pipelines.spec.data_rules import label_scale
from pipelines.spec.errors import SpecError, SpecProblem
from pipelines.spec.models import PipelineSpec
from pipelines.spec.resolved import ResolvedSpec
from pipelines.spec.rules import CheckContext, check
from pipelines.spec.typed import build
from pipelines.spec.yaml_source import MAX_SPEC_BYTES, decode_spec, read_yaml

__all__ = ["load_spec", "parse_spec", "SpecError", "SpecProblem", "PipelineSpec", "ResolvedSpec"]


def parse_spec(text: str, spec_file: str = "<spec>", cwd: str | None = None) -> ResolvedSpec:
    """Parses and checks spec text; `spec_file` anchors relative paths.

    Returns:
        The resolved spec, with the data profile (files, columns) filled in.

    Raises:
        SpecError: one or more problems, each naming the YAML path and line.
    """
    source = read_yaml(text, spec_file)
    spec, problems = build(PipelineSpec, source)
    if problems:
        raise SpecError(problems)
    resolved = ResolvedSpec.from_spec(spec, spec_file, cwd=cwd)
    ctx = CheckContext(spec, source, resolved)
    problems = check(ctx)
    if problems:
        raise SpecError(problems)
    assert ctx.profile is not None
    return dataclasses.replace(
        resolved,
        data_files=ctx.profile.files,
        data_format=ctx.profile.format,
        csv_dialect=ctx.profile.dialect,
        label_scale=label_scale(spec, ctx.profile),
        columns=ctx.profile.columns,
        numeric_columns=ctx.profile.numeric,
    )


def load_spec(path: str, cwd: str | None = None) -> ResolvedSpec:
    """Reads and checks the spec file at `path`. See `parse_spec`.

    Reads at most `MAX_SPEC_BYTES` (+1, to tell a larger file), so a huge file costs nothing.

    Example:
        >>> spec = load_spec("pipelines/examples/chicago_taxi.yaml")
        >>> spec.name
        'chicago_taxi'
    """
    if not os.path.isfile(path):
        raise SpecError(
            [SpecProblem("", f"spec file does not exist. Expected a YAML file. Received: {path}.", None, path)]
        )
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as err:
        raise SpecError(
            [
                SpecProblem(
                    "",
                    f"spec file cannot be read: {err.strerror}. Expected a readable YAML file. Fix its permissions.",
                    None,
                    path,
                )
            ]
        ) from None
    return parse_spec(decode_spec(raw, path, size=max(size, len(raw))), path, cwd=cwd)
