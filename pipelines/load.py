"""Loading a spec: read, type and check it with every rule, those over the step graph included.

The spec's own rules (`pipelines.spec.rules.RULES`: keys, data, label, model,
evaluation, orchestrator) live in the bottom layer; the rules over `steps:`,
`hooks:` and per-component settings (`pipelines.steps.checks`) need the
built-in table and the component registry, two layers up. This module sits
above both and runs them together, so a spec is only ever loaded fully checked.
"""

from __future__ import annotations

from pipelines.spec import ResolvedSpec, SpecError, checked_spec, read_spec_text, spec_context
from pipelines.spec.rules import RULES, check
from pipelines.steps.checks import rule_component_settings, rule_hooks, rule_steps

__all__ = ["STEP_RULES", "load_spec", "parse_spec"]

# Run after `RULES`; problems are reported in rule order.
STEP_RULES = (rule_steps, rule_hooks, rule_component_settings)


def parse_spec(text: str, spec_file: str = "<spec>", cwd: str | None = None, target: str | None = None) -> ResolvedSpec:
    """Parses and checks spec text; `spec_file` anchors relative paths.

    `target` (`compile --target`, `run --target`) replaces `orchestrator.target` before the
    checks, so every rule checks the spec for the target it is compiled or run for.

    Returns:
        The resolved spec, with the data profile (files, columns) filled in.

    Raises:
        SpecError: one or more problems, each naming the YAML path and line.
    """
    ctx = spec_context(text, spec_file, cwd=cwd, target=target)
    problems = check(ctx, (*RULES, *STEP_RULES))
    if problems:
        raise SpecError(problems)
    return checked_spec(ctx)


def load_spec(path: str, cwd: str | None = None, target: str | None = None) -> ResolvedSpec:
    """Reads and checks the spec file at `path`. See `parse_spec`.

    Reads at most `MAX_SPEC_BYTES` (+1, to tell a larger file), so a huge file costs nothing.

    Example:
        >>> spec = load_spec("pipelines/examples/chicago_taxi.yaml")
        >>> spec.name
        'chicago_taxi'
    """
    return parse_spec(read_spec_text(path), path, cwd=cwd, target=target)
