"""The sending side of `fast_csv`'s worker processes: starts them and feeds them record batches round-robin.

Each worker is `python -m components.example_gen.fast_csv_worker INDEX` (see
that module); this side imports nothing of `fast_csv`, so the two do not
import each other.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading

import pyarrow as pa

__all__ = ["WorkerPool"]

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class WorkerPool:
    """`workers` worker processes fed round-robin; `finish()` returns each one's counts.

    `job` is the `fast_csv.BatchJob` each worker gets first (as its `to_json()` line).

    Raises:
        RuntimeError: a worker exited with an error (its stderr is in the message).
    """

    def __init__(self, job, workers: int):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_REPO, os.environ.get("PYTHONPATH")])))
        self._processes = []
        self._errors: list[list[bytes]] = []
        for index in range(workers):
            process = subprocess.Popen(
                [sys.executable, "-m", "components.example_gen.fast_csv_worker", str(index)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=_REPO,
            )
            process.stdin.write(job.to_json().encode("utf-8") + b"\n")
            errors: list[bytes] = []
            threading.Thread(target=lambda p=process, e=errors: e.extend(p.stderr), daemon=True).start()
            self._processes.append(process)
            self._errors.append(errors)
        self._writers: list[pa.ipc.RecordBatchStreamWriter | None] = [None] * workers
        self._next = 0

    def send(self, batch: pa.RecordBatch) -> None:
        index = self._next % len(self._processes)
        self._next += 1
        try:
            if self._writers[index] is None:
                self._writers[index] = pa.ipc.new_stream(self._processes[index].stdin, batch.schema)
            self._writers[index].write_batch(batch)
        except (BrokenPipeError, OSError):
            self._raise_failure(index)

    def finish(self) -> list[dict[str, int]]:
        results = []
        for index, process in enumerate(self._processes):
            try:
                if self._writers[index] is not None:
                    self._writers[index].close()
                process.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            output = process.stdout.read()
            if process.wait() != 0:
                self._raise_failure(index)
            results.append(json.loads(output.decode("utf-8").strip().splitlines()[-1]) if output.strip() else {})
        return results

    def _raise_failure(self, index: int) -> None:
        process = self._processes[index]
        process.wait()
        output = b"".join(self._errors[index]).decode("utf-8", "replace").strip()
        logging.error("ExampleGen worker %d failed; its error output:\n%s", index, output)
        reason = output.splitlines()[-1] if output else "no error output"
        raise RuntimeError(f"ExampleGen worker {index} failed (exit {process.returncode}): {reason}")

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        for process in self._processes:
            if process.poll() is None:
                process.kill()
                process.wait()
