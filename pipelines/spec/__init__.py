"""Reading, typing and checking pipeline specs (YAML files); `pipelines.load` runs every check, step rules included."""

from __future__ import annotations

import dataclasses
import os

from pipelines.spec.data_rules import label_scale
from pipelines.spec.errors import SpecError, SpecProblem
from pipelines.spec.label_missing import with_drop_step
from pipelines.spec.models import SPEC_VARIANTS, PipelineSpec
from pipelines.spec.resolved import ResolvedSpec
from pipelines.spec.rules import CheckContext
from pipelines.spec.transform_rules import tf1_unreadable_columns
from pipelines.spec.typed import build
from pipelines.spec.yaml_source import MAX_SPEC_BYTES, YamlSource, decode_spec, read_yaml

__all__ = [
    "CheckContext",
    "checked_spec",
    "read_spec_text",
    "spec_context",
    "typed_spec",
    "SpecError",
    "SpecProblem",
    "PipelineSpec",
    "ResolvedSpec",
]


def spec_context(
    text: str, spec_file: str = "<spec>", cwd: str | None = None, target: str | None = None
) -> CheckContext:
    """The spec text typed and resolved, ready for the rules (`pipelines.load.parse_spec` runs them all).

    `target` (`compile --target`, `run --target`) replaces `orchestrator.target` before the
    checks, so every rule checks the spec for the target it is compiled or run for.

    Raises:
        SpecError: the text is not valid YAML, or does not type-check.
    """
    spec, source = typed_spec(text, spec_file)
    if target:
        spec = dataclasses.replace(spec, orchestrator=dataclasses.replace(spec.orchestrator, target=target))
    return CheckContext(spec, source, ResolvedSpec.from_spec(spec, spec_file, cwd=cwd))


def checked_spec(ctx: CheckContext) -> ResolvedSpec:
    """The resolved spec of `ctx` once every rule passed: the data profile filled in, the data's defaults applied."""
    assert ctx.profile is not None
    spec = ctx.spec
    # An unset `evaluation.metrics` becomes the metrics that fit the label: what runs downstream reads.
    spec = dataclasses.replace(spec, evaluation=dataclasses.replace(spec.evaluation, metrics=ctx.metrics))
    spec = with_drop_step(spec)  # `label.missing: drop`: a step leaves the rows without a label out
    if spec.transform.tf_compat_v1 is None and tf1_unreadable_columns(ctx.profile.columns):
        # TF1 graph mode cannot read these column names (`transform_rules`): Transform runs in TF2 mode.
        spec = dataclasses.replace(spec, transform=dataclasses.replace(spec.transform, tf_compat_v1=False))
    return dataclasses.replace(
        ctx.resolved,
        spec=spec,
        data_files=ctx.profile.files,
        spans=ctx.resolved.spans,
        data_format=ctx.profile.format,
        csv_dialect=ctx.profile.dialect,
        label_scale=label_scale(spec, ctx.profile),
        columns=ctx.profile.columns,
        numeric_columns=ctx.profile.numeric,
    )


def typed_spec(text: str, spec_file: str = "<spec>") -> tuple[PipelineSpec, YamlSource]:
    """The spec text parsed and typed, not checked against its data (`pipelines.load.parse_spec` does that).

    Raises:
        SpecError: the text is not valid YAML, or does not type-check.
    """
    source = read_yaml(text, spec_file)
    spec, problems = build(PipelineSpec, source, SPEC_VARIANTS)
    if problems:
        raise SpecError(problems)
    return spec, source


def read_spec_text(path: str) -> str:
    """The text of the spec file at `path`; at most `MAX_SPEC_BYTES` (+1, to tell a larger file) are read.

    Raises:
        SpecError: the file does not exist, cannot be read, is too large or is not text.
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
    return decode_spec(raw, path, size=max(size, len(raw)))
