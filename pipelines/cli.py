"""Command line: `python -m pipelines validate|run FILE`, `components`, `new-component NAME`.

Exit codes: 0 success, 1 the run failed, 2 the spec is invalid, 130 interrupted
(Ctrl-C), 143 stopped by SIGTERM (`docker stop`, an orchestrator). Every failure
is one `error:` line on stderr; an unexpected one (a bug, a broken install)
also writes its traceback to a log file that the line names.

User modules named in a spec (`transform.module`, `model.build_model`, step
and hook `uses:`) are imported with the spec's folder first on `sys.path`,
then the current folder, however the command was started.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence

from pipelines import api
from pipelines.beam.dask import DaskUnavailable
from pipelines.doctor import main as doctor
from pipelines.history.commands import add_runs_command
from pipelines.outcome.metadata_file import MetadataUnreadable
from pipelines.resources.gc_tuning import fewer_full_collections
from pipelines.runners.interrupt import RunInterrupted, exit_code, signal_name, sigterm_interrupts
from pipelines.runners.local import ComponentFailed
from pipelines.runners.lock import RootBusy
from pipelines.runners.spans import SpanNotFound
from pipelines.scaffold import ScaffoldError, new_component
from pipelines.scoring.command import add_predict_command
from pipelines.spec import SpecError
from pipelines.spec.run_failures import explain_failure
from pipelines.spec.span_rules import describe_spans
from pipelines.spec.sql_source import SqlProblem
from pipelines.steps.listing import format_listing
from pipelines.steps.plan import plan_steps
from pipelines.targets.commands import add_compile_command, add_submit_command, add_target_option, run_on_target
from pipelines.ui.commands import add_ui_command

__all__ = ["main", "DEFAULT_SPEC"]

DEFAULT_SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples", "chicago_taxi.yaml")
NOT_BLESSED_EXIT = 3  # `run --require-blessed` when the model is NOT BLESSED


def spec_folder_first(spec_path: str) -> str:
    """Puts the spec's folder first on `sys.path`, so modules beside the spec import by name.

    Args:
        spec_path: the spec file.

    Returns:
        The folder put first.
    """
    folder = os.path.dirname(os.path.abspath(spec_path))
    if sys.path[:1] != [folder]:
        sys.path.insert(0, folder)
    return folder


def _load(path: str, target: str | None = None):
    """Loads and checks the spec for `target` (default: the spec's), its folder first on sys.path.

    An unexpected error becomes `_Unexpected` (exit 2).
    """

    spec_folder_first(path)
    try:
        return api.load(path, target=target)
    except SpecError:
        raise
    except Exception as error:  # noqa: BLE001 - reported as one line, traceback to a file
        raise _Unexpected(error, 2, None) from error


class _Unexpected(Exception):
    """An error that is neither a spec problem nor a known run failure; `code` is the exit code."""

    def __init__(self, error: BaseException, code: int, log_dir: str | None):
        self.error = error
        self.code = code
        self.log_dir = log_dir


def _write_traceback(error: BaseException, log_dir: str | None) -> str:
    """Writes `error`'s traceback to `<log_dir>/error-<time>.log` (or a temp file); returns the path."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if log_dir:
        try:
            os.makedirs(log_dir, exist_ok=True)
            path = os.path.join(log_dir, f"error-{stamp}.log")
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text)
            return path
        except OSError:
            pass
    fd, path = tempfile.mkstemp(prefix=f"yaml-tfx-error-{stamp}-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def _cmd_validate(args) -> int:
    resolved = _load(args.spec)
    if resolved.spec.steps:
        for warning in plan_steps(resolved.spec).warnings:
            print(f"warning: {warning}", file=sys.stderr)
    print(f"{args.spec}: valid ({len(resolved.spec.features)} features, {len(resolved.data_files)} data file(s)).")
    if resolved.spans:
        print(f"Spans: {describe_spans(resolved.spans)}.")
    return 0


def _cmd_components(args) -> int:

    print(format_listing())
    return 0


def _cmd_new_component(args) -> int:

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

    with sigterm_interrupts():  # SIGTERM ends the run as Ctrl-C does: one line, the report, exit 143
        resolved = _load(args.spec, args.target)
        with fewer_full_collections():
            return _run_on(resolved, args)


def _run_on(resolved, args) -> int:

    target = args.target or resolved.spec.orchestrator.target
    if args.span is not None and not resolved.spans and resolved.spec.data.sql is not None:
        print(
            f"error: {resolved.spec_file}: --span {args.span}: `data.sql` has no `{{SPAN}}`. Expected a query such "
            "as `SELECT * FROM trips WHERE year = {SPAN}`, with `spans_sql` listing the spans. Drop --span, or "
            "add `{SPAN}` to `data.sql` and `spans_sql` under `data:`.",
            file=sys.stderr,
        )
        return 2
    if args.span is not None and not resolved.spans:
        print(
            f"error: {resolved.spec_file}: --span {args.span}: `data.path` has no span placeholder. Expected a "
            f"path such as data/span-{{SPAN}}/*.csv. Received: {resolved.spec.data.path}. Drop --span, or put "
            "`{SPAN}` (or `{YYYY}`/`{MM}`/`{DD}`) in `data.path`.",
            file=sys.stderr,
        )
        return 2
    if target != "local":
        return run_on_target(resolved, target)
    if "://" in resolved.root:
        print(
            f"error: {resolved.spec_file}: pipeline.root: a local run keeps ML Metadata (a SQLite file) and logs "
            f"under the root. Expected a local folder. Received: {resolved.root}. Run this spec on its kubeflow "
            "target (compile and submit), or point `pipeline.root` at a local folder.",
            file=sys.stderr,
        )
        return 2
    try:
        outcome = api.run(resolved, force=args.force, wait_seconds=args.wait, span=args.span)
    except SpanNotFound as error:
        print(f"error: {resolved.spec_file}: {error}", file=sys.stderr)
        return 2
    except SqlProblem as error:  # `--span N` on a query with `{SPAN}`: the span's rows, queried again
        print(f"error: {resolved.spec_file}: {error.key}: {error}", file=sys.stderr)
        return 1
    except ComponentFailed as error:
        # A cause the data explains is one line (file, column, row); the raw error is in the log.
        cause = explain_failure(resolved, error.__cause__) or str(error.__cause__).strip()
        cause = cause or type(error.__cause__).__name__
        print(f"error: Run failed at {error.component_id}: {cause}\nFull log: {error.log_file}", file=sys.stderr)
        return 1
    except RunInterrupted as error:
        where = f" while {error.component_id} was running" if error.component_id else ""
        print(
            f"error: interrupted ({error.signal}){where}. The components that finished are kept; run "
            f"`python -m pipelines run {resolved.spec_file}` again to resume from them. Full log: {error.log_file}",
            file=sys.stderr,
        )
        return error.exit_code
    except (RootBusy, MetadataUnreadable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except DaskUnavailable as error:
        print(f"error: {resolved.spec_file}: {error}", file=sys.stderr)
        return 1
    except SpecError:
        raise
    except Exception as error:  # noqa: BLE001 - reported as one line, traceback to the run's logs
        raise _Unexpected(error, 1, resolved.log_dir) from error
    if args.require_blessed and getattr(outcome.summary, "blessed", None) is False:
        which = "the last run's model" if outcome.up_to_date else "the model"
        print(
            f"error: {resolved.spec_file}: {which} is NOT BLESSED ({'; '.join(outcome.summary.reasons)}), and "
            f"--require-blessed asks for a blessed one (exit {NOT_BLESSED_EXIT}). Nothing was pushed.",
            file=sys.stderr,
        )
        return NOT_BLESSED_EXIT
    return 0


def _cmd_doctor(args) -> int:

    return doctor(args.spec)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipelines", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate", help="check a spec; create nothing")
    validate.add_argument("spec", help="the pipeline YAML file")
    validate.set_defaults(handler=_cmd_validate)
    run = commands.add_parser("run", help="run a spec locally (default: the bundled taxi example)")
    run.add_argument("spec", nargs="?", default=DEFAULT_SPEC, help="the pipeline YAML file")
    run.add_argument("--force", action="store_true", help="skip the up-to-date check; TFX's cache decides per step")
    run.add_argument(
        "--require-blessed",
        action="store_true",
        help=f"exit {NOT_BLESSED_EXIT} when the run's model is NOT BLESSED (up to date: the last run's), for CI jobs",
    )
    run.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another run on the same pipeline root to finish (default: fail at once)",
    )
    run.add_argument(
        "--span",
        type=int,
        default=None,
        metavar="N",
        help="with spans in data.path (or data.sql): ingest (backfill) span N, its newest version, even if "
        "ingested before; a query's span N is queried again",
    )
    add_target_option(run)
    add_compile_command(commands)
    add_submit_command(commands)
    add_runs_command(commands)
    add_ui_command(commands)
    add_predict_command(commands, _load)
    run.set_defaults(handler=_cmd_run)
    components = commands.add_parser("components", help="list built-in steps, installed components and hooks")
    components.set_defaults(handler=_cmd_components)
    scaffold = commands.add_parser("new-component", help="create a component package and its test")
    scaffold.add_argument("name", help="lowercase Python name, e.g. drop_outliers")
    scaffold.add_argument("--dir", default=".", help="folder to create it in (default: here)")
    scaffold.set_defaults(handler=_cmd_new_component)
    doctor = commands.add_parser("doctor", help="GPUs, CUDA/cuDNN, mixed precision and XLA advice (exit 3: no GPU)")
    doctor.add_argument("spec", nargs="?", help="a pipeline YAML file: adds advice for its model type (optional)")
    doctor.set_defaults(handler=_cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command.

    Args:
        argv: the arguments (default: `sys.argv[1:]`).

    Returns:
        The exit code: 0 success, 1 the run failed, 2 the spec is invalid, 130 interrupted (Ctrl-C),
        143 stopped by SIGTERM.
    """

    args = _parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt as interrupt:
        print(
            f"error: interrupted ({signal_name(interrupt)}). A run started again cleans up and resumes from the "
            "steps that finished.",
            file=sys.stderr,
        )
        return exit_code(interrupt)
    except SpecError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        print(f"{len(error.problems)} problem(s) in the spec; nothing was run or written.", file=sys.stderr)
        return 2
    except _Unexpected as unexpected:
        phase = "checking the spec" if unexpected.code == 2 else "the run"
        return _report_unexpected(unexpected.error, unexpected.code, unexpected.log_dir, phase)
    except Exception as error:  # noqa: BLE001 - any other command: one line, traceback to a file
        return _report_unexpected(error, 1, None, f"`{args.command}`")


def _report_unexpected(error: BaseException, code: int, log_dir: str | None, phase: str) -> int:
    """Prints one `error:` line for an unexpected error, its traceback going to a log file; returns `code`."""
    log = _write_traceback(error, log_dir)
    reason = str(error).strip().splitlines()[0] if str(error).strip() else "no message"
    print(
        f"error: {phase} stopped on an unexpected {type(error).__name__}: {reason}. The traceback is in {log}; "
        "if this line does not say what to fix, report it with that file.",
        file=sys.stderr,
    )
    return code
