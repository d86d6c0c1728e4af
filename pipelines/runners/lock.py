"""One run at a time per pipeline root: an exclusive `flock` on `<root>/.run.lock`.

Two runs on one root would both train, push two versions and write into one
ML Metadata store. The lock file stays in the root; the kernel releases the
lock when its holder exits, however it exits (a SIGKILL included), so a stale
file never blocks a run. The holder writes its pid, host, start time and
command line into the file, and a run that cannot take the lock names them.
An object-store root (`gs://...`) is not locked: `flock` works on local files only.

Example:
    >>> with RunLock("/tmp/runs/taxi", wait_seconds=60):
    ...     ...  # run the pipeline
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import socket
import sys
import time

__all__ = ["RunLock", "RootBusy", "LOCK_FILE"]

LOCK_FILE = ".run.lock"
_POLL_SECONDS = 0.2
# The holder writes its details just after taking the lock: a run that lost the race by a moment waits this long for them.
_DETAILS_GRACE_SECONDS = 2.0


class RootBusy(RuntimeError):
    """Another run holds the pipeline root; `holder` is what it wrote in the lock file."""

    def __init__(self, root: str, lock_path: str, holder: dict, waited: float):
        self.root = root
        self.lock_path = lock_path
        self.holder = holder
        who = (
            f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
            if holder
            else "a process that has not written its details yet"
        )
        waited_words = f" after waiting {waited:.0f}s" if waited >= 1 else ""
        super().__init__(
            f"another run is using the pipeline root {root}{waited_words}: {who} (lock file {lock_path}). "
            "Expected one run at a time per root. Wait for it to finish, pass `--wait SECONDS` to queue "
            "behind it, or give this run another `pipeline.root`."
        )


def _read_holder(handle) -> dict:
    handle.seek(0)
    try:
        return json.loads(handle.read() or "{}")
    except ValueError:
        return {}


def _holder_details(handle) -> dict:
    """What the holder wrote in the lock file, waiting up to `_DETAILS_GRACE_SECONDS` for it to appear."""
    deadline = time.monotonic() + _DETAILS_GRACE_SECONDS
    holder = _read_holder(handle)
    while not holder and time.monotonic() < deadline:
        time.sleep(0.05)
        holder = _read_holder(handle)
    return holder


class RunLock:
    """Holds `<root>/.run.lock` exclusively while the `with` block runs.

    Args:
        root: the pipeline root (created if missing).
        wait_seconds: how long to wait for another run to finish; 0 fails at once.

    Raises:
        RootBusy: from `__enter__`, when another process still holds the lock after `wait_seconds`.
    """

    def __init__(self, root: str, wait_seconds: float = 0.0):
        self.root = root
        self.path = os.path.join(root, LOCK_FILE)
        self.wait_seconds = wait_seconds
        self._handle = None

    def __enter__(self) -> RunLock:
        if "://" in self.root:
            return self
        os.makedirs(self.root, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until __exit__
        started = time.monotonic()
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited >= self.wait_seconds:
                    holder = _holder_details(handle)
                    handle.close()
                    raise RootBusy(self.root, self.path, holder, waited) from None
                time.sleep(_POLL_SECONDS)
        handle.seek(0)
        handle.truncate()
        handle.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "started": datetime.datetime.now().isoformat(timespec="seconds"),
                    "command": " ".join(sys.argv),
                }
            )
        )
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc_info) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None
