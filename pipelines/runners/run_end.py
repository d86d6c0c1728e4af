"""What every finished run does, on any runnable target: summary, HTML report, last-run record, history record."""

from __future__ import annotations

from typing import TextIO

from pipelines.history.records import save_run
from pipelines.outcome import fingerprint
from pipelines.outcome.summary import RunSummary, format_summary, summarize

__all__ = ["finish_run"]


def finish_run(
    resolved,
    run_id: str,
    connection,
    components,
    reporter,
    current_fingerprint: str,
    seconds: float,
    log_file: str,
    stream: TextIO,
    inputs=None,
) -> RunSummary:
    """Prints the summary block and writes the run's report, `last_run.json` and `<root>/runs/<run id>.json`.

    Args:
        resolved: the run's spec.
        run_id: the pipeline run id.
        connection: the ML Metadata connection config.
        components: each component's `ComponentResult`, in run order.
        reporter: the run's `RunReporter` hook (writes the HTML report).
        current_fingerprint: the run fingerprint taken before the run started.
        seconds: how long the run took.
        log_file: the run's full log.
        stream: where the summary goes.
        inputs: `pipelines.history.records.read_inputs(resolved)` taken as the run started (the spec text and
            data files it read; default: read now, leaving out a data file that is gone).

    Returns:
        The run's summary.
    """

    summary = summarize(connection, components)
    report = reporter.write(summary)
    print(format_summary(summary, seconds, log_file, report), file=stream, flush=True)
    fingerprint.write_record(
        resolved,
        fingerprint.RunRecord(
            fingerprint=current_fingerprint,
            run_id=run_id,
            max_execution_id=fingerprint.max_execution_id(resolved.metadata_path),
            outputs=summary.output_uris + ([summary.pushed_path] if summary.pushed_path else []),
            summary=summary.to_dict(),
        ),
    )
    save_run(resolved, run_id, summary.to_dict(), current_fingerprint, seconds, log_file, inputs)
    return summary
