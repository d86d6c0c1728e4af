"""`python -m pipelines runs SPEC [--metadata HOST:PORT] [show RUN | diff RUN_A RUN_B] [--json]`.

RUN is a run id, a unique prefix of one, `latest`, or `-N` (-1 the newest run,
-2 the one before). SPEC may also be the pipeline root folder itself.
With `--metadata HOST:PORT` the runs are those Kubeflow Pipelines ran, read
from the cluster's ML Metadata service (e.g. localhost:8080 after
`kubectl port-forward -n kubeflow svc/metadata-grpc-service 8080:8080`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from pipelines.history import format as text
from pipelines.history.cluster_metadata import cluster_runs, open_cluster_metadata
from pipelines.history.diff import diff_runs
from pipelines.history.mlmd_runs import RootError, fill_summary, list_runs
from pipelines.history.select import RunNotFound, select_run
from pipelines.history.span_tables import across_spans_text
from pipelines.outcome.metadata_file import MetadataUnreadable, open_metadata
from pipelines.report.paths import report_path
from pipelines.report.span_history import RunSpans, span_drift, span_metrics
from pipelines.spec import ResolvedSpec, read_spec_text, typed_spec
from pipelines.spec.orchestrator import kubeflow_name

__all__ = ["add_runs_command", "root_of"]


def root_of(path: str) -> str:
    """The pipeline root that `path` names: a root folder as it is, a spec file's `pipeline.root`.

    A spec is read and typed but not checked against its data: listing the history needs only the root,
    and the data the runs read may be gone since (the data checks are for a run).

    Raises:
        SpecError: `path` is a spec that cannot be read, is not valid YAML or does not type-check.
        RootError: `path` is neither a folder nor a file.
    """

    if os.path.isdir(path):
        return os.path.abspath(path)
    if os.path.isfile(path):
        return _spec_root(path)
    raise RootError(
        f"{path} does not exist. Expected a pipeline spec (YAML) or a pipeline root folder. Received: {path}. "
        "Check the path."
    )


def _spec_root(path: str) -> str:
    """`pipeline.root` of the spec file at `path`, resolved as a run resolves it, without the spec's data checks."""

    spec, _ = typed_spec(read_spec_text(path), path)
    return ResolvedSpec.from_spec(spec, path).root


def _kubeflow_pipeline(path: str) -> str:
    """The name Kubeflow ran the spec at `path` under (its `pipeline.name` as the kubeflow target compiles it).

    Raises:
        SpecError: `path` is a spec that cannot be read, is not valid YAML or does not type-check.
        RootError: `path` is not a file.
    """
    if not os.path.isfile(path):
        raise RootError(
            f"{path} is not a spec file. Expected the pipeline spec (YAML) that was submitted to Kubeflow, whose "
            f"`pipeline.name` names its runs in the cluster's ML Metadata. Received: {path}. Pass the spec file."
        )
    spec, _ = typed_spec(read_spec_text(path), path)
    return kubeflow_name(spec.pipeline.name)


def _across_spans(store, spec_path: str, run, runs: list, with_drift: bool = True) -> dict:
    """The store's blessed metrics by span, drift per span pair (TFDV on the statistics of a local root) and the
    drift limit (`data.checks.drift` of the spec named on the command line, else of the run's recorded spec;
    None when neither sets it). `runs`: every run listed, whose spans are already read."""
    text_and_path = None
    if os.path.isfile(spec_path):
        text_and_path = (read_spec_text(spec_path), spec_path)
    elif run.record is not None and run.record.spec_text:
        text_and_path = (run.record.spec_text, run.record.spec_file or "<recorded spec>")
    limit = None
    if text_and_path is not None:
        try:
            limit = typed_spec(*text_and_path)[0].data.checks.drift or None
        except ValueError:  # a recorded spec this version no longer reads: no limit shown
            limit = None
    spans = {r.run_id: RunSpans(r.ingested_spans, r.trained_spans) for r in runs}
    metrics = span_metrics(store, spans)
    return {"metrics": metrics, "drift": span_drift(store) if with_drift else [], "limit": limit}


def _json(value) -> str:
    return json.dumps(
        value, indent=2, default=lambda o: dataclasses.asdict(o) if dataclasses.is_dataclass(o) else str(o)
    )


def _cmd_runs(args) -> int:

    try:
        if args.metadata:  # Kubeflow: the cluster's ML Metadata; no root, records or reports here
            pipeline = _kubeflow_pipeline(args.spec)
            root, store = None, open_cluster_metadata(args.metadata, pipeline)
            runs = cluster_runs(store, pipeline)
        else:
            root = root_of(args.spec)
            runs = list_runs(root, with_summaries=args.runs_action is None)
        by_id = {run.run_id: run for run in runs}
        ids = [run.run_id for run in runs]

        def chosen(ref: str):
            run = by_id[select_run(ids, ref)]
            return fill_summary(root, run) if root else run

        if args.runs_action == "show":
            run = chosen(args.run)
            report = report_path(root, run.run_id) if root else None
            across = None
            if any(r.ingested_spans or r.trained_spans for r in runs):
                if root:
                    store = open_metadata(os.path.join(root, "metadata.sqlite"), readonly=True)
                across = _across_spans(store, args.spec, run, runs, with_drift=bool(root))
            if args.json:
                print(_json({**dataclasses.asdict(run), "across_spans": across}))
            else:
                lines = across_spans_text(across["metrics"], across["drift"], across["limit"]) if across else None
                print(text.format_run(run, report, lines))
        elif args.runs_action == "diff":
            run_a, run_b = (chosen(ref) for ref in (args.run_a, args.run_b))
            diff = diff_runs(run_a, run_b)
            print(_json(diff.to_dict()) if args.json else text.format_diff(diff))
        else:
            print(_json([dataclasses.asdict(run) for run in runs]) if args.json else text.format_runs(runs))
    except (RootError, RunNotFound, MetadataUnreadable) as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 2
    return 0


def add_runs_command(commands) -> None:
    """Registers `runs` (with `show` and `diff`) on the CLI's subcommands.

    Args:
        commands: the `add_subparsers()` object of `python -m pipelines`.
    """
    runs = commands.add_parser(
        "runs",
        help="the runs of a pipeline from ML Metadata; `runs SPEC show RUN`, `runs SPEC diff RUN_A RUN_B`",
        usage="python -m pipelines runs SPEC [--json] [--metadata HOST:PORT] [show RUN | diff RUN_A RUN_B]",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    runs.add_argument("spec", help="the pipeline YAML file (or its root folder)")
    runs.add_argument("--json", action="store_true", help="print JSON for scripts")
    runs.add_argument(
        "--metadata",
        metavar="HOST:PORT",
        default=None,
        help="read the runs Kubeflow Pipelines ran from the cluster's ML Metadata gRPC service at HOST:PORT",
    )
    actions = runs.add_subparsers(dest="runs_action")
    show = actions.add_parser("show", help="one run in detail")
    show.add_argument("run", help="a run id, a unique prefix, `latest` or -N (-1 the newest)")
    diff = actions.add_parser("diff", help="what changed from RUN_A to RUN_B")
    diff.add_argument("run_a", help="the reference run")
    diff.add_argument("run_b", help="the run compared with it")
    for action in (show, diff):
        action.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for scripts")
    runs.set_defaults(handler=_cmd_runs)
