"""Spec rule: the pipeline's and the model's names are usable names TFX and the file system accept."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipelines.spec.errors import SpecProblem

__all__ = ["MAX_FILE_NAME", "MAX_MODEL_NAME", "MAX_PIPELINE_NAME", "rule_names"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
# TFX's `Pipeline` refuses a longer `pipeline_name` (tfx/orchestration/pipeline.py, _MAX_PIPELINE_NAME_LENGTH).
MAX_PIPELINE_NAME = 63
# A file name's bytes on Linux and macOS file systems (NAME_MAX): the Deployer's `<model_name>.config` must fit.
MAX_FILE_NAME = 255
MAX_MODEL_NAME = MAX_FILE_NAME - len(".config")


def rule_names(ctx) -> Iterator[SpecProblem]:
    names = (
        ("pipeline.name", ctx.spec.pipeline.name, MAX_PIPELINE_NAME, "TFX refuses a longer pipeline name"),
        (
            "push.model_name",
            ctx.spec.push.model_name,
            MAX_MODEL_NAME,
            "the model is pushed to `<serving_dir>/<model_name>/` and deployed with `<serving_dir>/<model_name>"
            f".config/`, and a file name holds at most {MAX_FILE_NAME} bytes",
        ),
    )
    for path, value, limit, why in names:
        if value is not None and not _NAME.match(value):
            yield ctx.problem(
                path, f"`{value}` is not a usable name. Use letters, digits, `_`, `.`, `-`, starting with a letter."
            )
        elif value is not None and len(value) > limit:
            shown = f"`{value[:24]}...`" if len(value) > 40 else f"`{value}`"
            yield ctx.problem(
                path,
                f"the name is too long: {why}. Expected at most {limit} characters. Received: {shown} "
                f"({len(value)} characters). Use a shorter name.",
            )
