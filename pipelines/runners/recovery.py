"""Cleans up after a run that was killed (SIGKILL, power loss) before it could.

A killed run leaves executions RUNNING in ML Metadata, half-written output
folders (`<artifact root>/<node>/<output>/<execution id>/` and the node's
`.system/executor_execution/<execution id>/`), and `.tmp-*` staging folders
in the serving folder. The next run, once it holds the root's lock (so no
live run can own them), marks those executions FAILED and removes the
leftovers. Completed and cached executions and their outputs are untouched,
so the next run resumes from TFX's cache.
"""

from __future__ import annotations

import dataclasses
import glob
import logging
import os
import re
import shutil

from pipelines.outcome.metadata_file import open_metadata

__all__ = ["Recovered", "recover_killed_run", "fail_running_executions", "remove_partial_outputs", "remove_staging"]

# The reason recorded on an execution that a killed run left RUNNING.
KILLED_REASON = "the run was killed before this execution finished; marked failed by the next run"
_STAGING = re.compile(r"^\.tmp-.*-(\d+)$")


@dataclasses.dataclass
class Recovered:
    """What `recover_killed_run` cleaned: execution ids and removed paths."""

    failed_executions: list[int] = dataclasses.field(default_factory=list)
    removed: list[str] = dataclasses.field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.failed_executions or self.removed)

    def describe(self) -> str:
        """One line for the console."""
        ids = ", ".join(str(i) for i in self.failed_executions) or "none"
        return (
            f"Recovered from a killed run: marked {len(self.failed_executions)} execution(s) failed in ML Metadata "
            f"(ids {ids}) and removed {len(self.removed)} partial output or staging folder(s)."
        )


def fail_running_executions(metadata_path: str) -> list[int]:
    """Marks every RUNNING (or NEW) execution in the SQLite ML Metadata store FAILED.

    Args:
        metadata_path: the store's SQLite file; nothing happens when it does not exist.

    Returns:
        The ids of the executions it marked.

    Raises:
        MetadataUnreadable: the file is not an ML Metadata store SQLite can read (one line: the file and the fix).
    """
    if not os.path.exists(metadata_path):
        return []
    from ml_metadata.proto import metadata_store_pb2

    store = open_metadata(metadata_path, readonly=False)
    unfinished = (metadata_store_pb2.Execution.RUNNING, metadata_store_pb2.Execution.NEW)
    stale = [e for e in store.get_executions() if e.last_known_state in unfinished]
    for execution in stale:
        execution.last_known_state = metadata_store_pb2.Execution.FAILED
        execution.custom_properties["failure_reason"].string_value = KILLED_REASON
    if stale:
        store.put_executions(stale)
    return [e.id for e in stale]


def remove_partial_outputs(artifact_root: str, execution_ids: list[int]) -> list[str]:
    """Removes the output and scratch folders of the given (failed) executions.

    Args:
        artifact_root: the pipeline's artifact root (`<root>/artifacts`).
        execution_ids: executions whose outputs were never published.

    Returns:
        The removed paths.
    """
    removed = []
    for execution_id in execution_ids:
        patterns = (
            os.path.join(glob.escape(artifact_root), "*", "*", str(execution_id)),
            os.path.join(glob.escape(artifact_root), "*", ".system", "executor_execution", str(execution_id)),
        )
        for pattern in patterns:
            for path in glob.glob(pattern):
                _remove(path)
                removed.append(path)
    return removed


def _staging_owner_alive(pid: int, folder: str) -> bool:
    """Whether the process that made `folder` still runs: `pid` is alive and started before the folder was made.

    A pid is reused once its process is gone; a process that started after the folder's last change
    (its mtime) cannot have made it, so that folder is a dead run's.
    """
    import psutil

    try:
        started = psutil.Process(pid).create_time()
        made = os.stat(folder).st_mtime
    except psutil.NoSuchProcess:
        return False
    except (psutil.AccessDenied, OSError):
        return True  # cannot tell: keep it
    return started <= made + 1.0  # create_time is rounded to the clock tick


def remove_staging(model_dir: str) -> list[str]:
    """Removes the Pusher's `.tmp-<version>-<pid>` staging folders whose process is gone.

    Args:
        model_dir: `<serving_dir>/<model_name>`; another pipeline may push to the same serving folder,
            so only this model's folder is looked at, and a folder whose process is alive is kept (a
            live pid that started after the folder was made is a reused pid: that folder goes).

    Returns:
        The removed paths.
    """
    if not os.path.isdir(model_dir):
        return []
    removed = []
    for name in sorted(os.listdir(model_dir)):
        match = _STAGING.match(name)
        path = os.path.join(model_dir, name)
        if match and not _staging_owner_alive(int(match.group(1)), path):
            _remove(path)
            removed.append(path)
    return removed


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def recover_killed_run(resolved) -> Recovered:
    """Cleans what a killed run on this root left behind. Call it while holding the root's `RunLock`.

    Args:
        resolved: the run's `ResolvedSpec`.

    Returns:
        What was cleaned (falsy when nothing was).
    """
    result = Recovered()
    if "://" in resolved.root:  # an object-store root: ML Metadata is not a local SQLite file
        return result
    result.failed_executions = fail_running_executions(resolved.metadata_path)
    result.removed += remove_partial_outputs(resolved.artifact_root, result.failed_executions)
    result.removed += remove_staging(os.path.join(resolved.serving_dir, resolved.model_name))
    for path in glob.glob(os.path.join(glob.escape(resolved.root), "*.tmp-*")):  # e.g. last_run.json.tmp-<pid>
        _remove(path)
        result.removed.append(path)
    if result:
        logging.warning("%s Removed: %s", result.describe(), result.removed)
    return result
