"""Command line: `python -m pipelines validate|run FILE`, `components`, `new-component NAME`.

Exit codes: 0 success, 1 the run failed, 2 the spec is invalid.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from pipelines.spec import SpecError
from pipelines.targets.commands import add_compile_command, add_submit_command, add_target_option

__all__ = ["main", "DEFAULT_SPEC"]

DEFAULT_SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples", "chicago_taxi.yaml")


def _load(path: str):
    from pipelines.api import load

    return load(path)


def _cmd_validate(args) -> int:
    resolved = _load(args.spec)
    if resolved.spec.steps:
        from pipelines.steps.plan import plan_steps

        for warning in plan_steps(resolved.spec).warnings:
            print(f"warning: {warning}", file=sys.stderr)
    print(f"{args.spec}: valid ({len(resolved.spec.features)} features, {len(resolved.data_files)} data file(s)).")
    return 0


def _cmd_components(args) -> int:
    from pipelines.steps.listing import format_listing

    print(format_listing())
    return 0


def _cmd_new_component(args) -> int:
    from pipelines.scaffold import ScaffoldError, new_component

    try:
        files = new_component(args.name, args.dir)
    except ScaffoldError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    root = os.path.dirname(files[0])
    print("\n".join(["Created:", *(f"  {path}" for path in files)]))
    print(f"Next: pip install -e {root} && python -m pytest {os.path.join(root, 'tests')}")
    print(f"Then in a spec: steps: [{{name: ..., uses: {args.name}, inputs: {{examples: ExampleGen.examples}}}}]")
    return 0


def _cmd_run(args) -> int:
    from pipelines.api import run
    from pipelines.runners.local import ComponentFailed

    resolved = _load(args.spec)
    target = args.target or resolved.spec.orchestrator.target
    if target != "local":
        from pipelines.targets.commands import run_on_target

        return run_on_target(resolved, target)
    try:
        run(resolved, force=args.force)
    except ComponentFailed as error:
        print(f"\nRun failed at {error.component_id}: {error.__cause__}", file=sys.stderr)
        print(f"Full log: {error.log_file}", file=sys.stderr)
        return 1
    return 0


def _cmd_doctor(args) -> int:
    from pipelines.doctor import main as doctor

    return doctor()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipelines", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate", help="check a spec; create nothing")
    validate.add_argument("spec", help="the pipeline YAML file")
    validate.set_defaults(handler=_cmd_validate)
    run = commands.add_parser("run", help="run a spec locally (default: the bundled taxi example)")
    run.add_argument("spec", nargs="?", default=DEFAULT_SPEC, help="the pipeline YAML file")
    run.add_argument("--force", action="store_true", help="skip the up-to-date check; TFX's cache decides per step")
    add_target_option(run)
    add_compile_command(commands)
    add_submit_command(commands)
    run.set_defaults(handler=_cmd_run)
    components = commands.add_parser("components", help="list built-in steps, installed components and hooks")
    components.set_defaults(handler=_cmd_components)
    scaffold = commands.add_parser("new-component", help="create a component package and its test")
    scaffold.add_argument("name", help="lowercase Python name, e.g. drop_outliers")
    scaffold.add_argument("--dir", default=".", help="folder to create it in (default: here)")
    scaffold.set_defaults(handler=_cmd_new_component)
    doctor = commands.add_parser("doctor", help="GPUs, CUDA/cuDNN, mixed precision and XLA advice (exit 3: no GPU)")
    doctor.set_defaults(handler=_cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.handler(args)
    except SpecError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        print(f"{len(error.problems)} problem(s) in the spec; nothing was run or written.", file=sys.stderr)
        return 2
