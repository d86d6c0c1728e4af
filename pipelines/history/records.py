"""One small JSON record per finished run: what ML Metadata does not keep.

ML Metadata knows the executions and artifacts of a run, not the spec text that
made them nor which data files were read. After every run, `<root>/runs/<run id>.json`
keeps the spec text, each data file's size and modification time (what TFX's
ExampleGen fingerprints too; both taken as the run starts, so a data file
deleted or changed before the run ends does not cost the record), a fingerprint of the framework's code, the run
fingerprint of `pipelines.outcome.fingerprint` and the run summary. Runs from
before these records list from ML Metadata alone.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import sys
from typing import Any

from pipelines.outcome.fingerprint import code_fingerprint

__all__ = [
    "RunRecord",
    "RunInputs",
    "RUNS_DIR",
    "record_path",
    "read_inputs",
    "build_record",
    "write_record",
    "save_run",
    "read_records",
]

RUNS_DIR = "runs"


@dataclasses.dataclass
class RunRecord:
    """What one run read and produced, as written to `<root>/runs/<run id>.json`."""

    run_id: str
    pipeline: str
    spec_file: str
    spec_text: str
    data_files: dict[str, dict[str, int]]  # path -> {"size": bytes, "mtime_ns": ...}
    code_fingerprint: str
    run_fingerprint: str
    seconds: float
    log_file: str | None
    summary: dict[str, Any]


def record_path(root: str, run_id: str) -> str:
    """`<root>/runs/<run id>.json`, the id made safe for a file name as the HTML report's is.

    Args:
        root: the pipeline root.
        run_id: the run's id (an ISO timestamp).

    Returns:
        The record's path.
    """
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", run_id)
    return os.path.join(root, RUNS_DIR, f"{safe}.json")


@dataclasses.dataclass(frozen=True)
class RunInputs:
    """What a run read, taken as it starts: the spec's text and each data file's size and modification time."""

    spec_text: str
    data_files: dict[str, dict[str, int]]


def read_inputs(resolved) -> RunInputs:
    """The spec's text and its data files' sizes, as they are now; a file gone or unreadable is left out.

    A run takes this as it starts, so its record says what it read even when a file changes or is
    deleted before the run ends.

    Args:
        resolved: the run's `ResolvedSpec`.
    """
    try:
        with open(resolved.spec_file, encoding="utf-8") as handle:
            spec_text = handle.read()
    except (OSError, UnicodeDecodeError):
        spec_text = ""
    data_files = {}
    for path in resolved.data_files:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        data_files[path] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    return RunInputs(spec_text, data_files)


def build_record(
    resolved,
    run_id: str,
    summary: dict[str, Any],
    run_fingerprint: str,
    seconds: float,
    log_file,
    inputs: RunInputs | None = None,
):
    """The record of a run that just finished.

    Args:
        resolved: the run's `ResolvedSpec`.
        run_id: `RunResult.run_id`.
        summary: `RunSummary.to_dict()`.
        run_fingerprint: `pipelines.outcome.fingerprint.run_fingerprint(resolved)`.
        seconds: how long the run took.
        log_file: the run's log.
        inputs: `read_inputs(resolved)` as the run started (default: read now).

    Returns:
        A `RunRecord`.
    """
    inputs = inputs or read_inputs(resolved)
    return RunRecord(
        run_id=run_id,
        pipeline=resolved.name,
        spec_file=resolved.spec_file,
        spec_text=inputs.spec_text,
        data_files=inputs.data_files,
        code_fingerprint=code_fingerprint(),
        run_fingerprint=run_fingerprint,
        seconds=round(seconds, 3),
        log_file=log_file,
        summary=summary,
    )


def write_record(root: str, record: RunRecord) -> str:
    """Writes `record` atomically (a temporary file, then a rename); returns its path."""
    path = record_path(root, record.run_id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(dataclasses.asdict(record), handle, indent=1)
    os.replace(tmp, path)
    return path


def save_run(
    resolved,
    run_id: str,
    summary: dict[str, Any],
    run_fingerprint: str,
    seconds: float,
    log_file,
    inputs: RunInputs | None = None,
) -> None:
    """Builds and writes a finished run's record; a failure to write it is a warning, never a failed run.

    Args: as `build_record`.
    """
    try:
        record = build_record(resolved, run_id, summary, run_fingerprint, seconds, log_file, inputs)
        write_record(resolved.root, record)
    except OSError as error:
        print(
            f"warning: could not write the run record under {os.path.join(resolved.root, RUNS_DIR)} ({error}); "
            "`runs` will list this run from ML Metadata without its spec text and data files.",
            file=sys.stderr,
        )


def read_records(root: str) -> dict[str, RunRecord]:
    """Run id -> record, for every readable record under `<root>/runs/`; unreadable ones are skipped."""
    records = {}
    for path in glob.glob(os.path.join(root, RUNS_DIR, "*.json")):
        try:
            with open(path, encoding="utf-8") as handle:
                record = RunRecord(**json.load(handle))
        except (OSError, ValueError, TypeError):
            continue
        records[record.run_id] = record
    return records
