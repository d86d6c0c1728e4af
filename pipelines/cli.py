"""Command line: `python -m pipelines validate|run FILE`.

Exit codes: 0 success, 1 the run failed, 2 the spec is invalid.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from pipelines.spec import SpecError

__all__ = ["main", "DEFAULT_SPEC"]

DEFAULT_SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples", "chicago_taxi.yaml")


def _load(path: str):
    from pipelines.api import load

    return load(path)


def _cmd_validate(args) -> int:
    resolved = _load(args.spec)
    print(f"{args.spec}: valid ({len(resolved.spec.features)} features, {len(resolved.data_files)} data file(s)).")
    return 0


def _cmd_run(args) -> int:
    from pipelines.api import run
    from pipelines.runners.local import ComponentFailed

    resolved = _load(args.spec)
    try:
        run(resolved, force=args.force)
    except ComponentFailed as error:
        print(f"\nRun failed at {error.component_id}: {error.__cause__}", file=sys.stderr)
        print(f"Full log: {error.log_file}", file=sys.stderr)
        return 1
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipelines", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate", help="check a spec; create nothing")
    validate.add_argument("spec", help="the pipeline YAML file")
    validate.set_defaults(handler=_cmd_validate)
    run = commands.add_parser("run", help="run a spec locally (default: the bundled taxi example)")
    run.add_argument("spec", nargs="?", default=DEFAULT_SPEC, help="the pipeline YAML file")
    run.add_argument("--force", action="store_true", help="skip the up-to-date check; TFX's cache decides per step")
    run.set_defaults(handler=_cmd_run)
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
