"""`python -m pipelines ui ROOT [--port N]`: browse the runs of a pipeline root on http://127.0.0.1:N/."""

from __future__ import annotations

import sys

from pipelines.history.commands import root_of
from pipelines.history.mlmd_runs import RootError, open_store
from pipelines.outcome.metadata_file import MetadataUnreadable

__all__ = ["add_ui_command"]


def _cmd_ui(args) -> int:
    from pipelines.ui.app import serve  # the UI's app reads TFMA/Beam outputs: loaded only by `pipelines ui`

    try:
        root = root_of(args.root)
        open_store(root)  # a missing or broken metadata.sqlite is one line now, not a 500 page per request
    except (RootError, MetadataUnreadable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        serve(root, args.port)
    except OSError as error:
        print(
            f"error: cannot listen on 127.0.0.1:{args.port} ({error.strerror or error}). Expected a free port. "
            f"Received: --port {args.port}. Pick another with --port, or 0 for any free one.",
            file=sys.stderr,
        )
        return 2
    return 0


def add_ui_command(commands) -> None:
    """Registers `ui` on the CLI's subcommands.

    Args:
        commands: the `add_subparsers()` object of `python -m pipelines`.
    """
    ui = commands.add_parser("ui", help="a web page on 127.0.0.1 to browse a root's runs, lineage and reports")
    ui.add_argument("root", help="the pipeline root folder (or its spec YAML)")
    ui.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0: any free port)")
    ui.set_defaults(handler=_cmd_ui)
