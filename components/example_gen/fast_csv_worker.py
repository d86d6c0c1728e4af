"""A worker process of `fast_csv` (started by `fast_csv_pool.WorkerPool`): encodes and writes the batches it is sent.

A worker is `python -m components.example_gen.fast_csv_worker INDEX`, a fresh
interpreter that imports pyarrow and tfx_bsl but no TensorFlow (and not the
caller's `__main__`, which `multiprocessing`'s spawn would re-run). It reads
the job as one JSON line on stdin, then an Arrow IPC stream of record batches;
each batch becomes `data_tfrecord-<INDEX>-<n>.gz` in each split folder. At
the end it prints its row counts per split as one JSON line. A full pipe
makes the sender wait, so at most a few batches are in memory at a time.
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa

from components.example_gen.fast_csv import BatchJob, write_batch

__all__ = ["main"]


def main(argv: list[str]) -> int:
    worker = int(argv[0])
    job = BatchJob.from_json(sys.stdin.buffer.readline().decode("utf-8"))
    counts = dict.fromkeys(job.splits.names, 0)
    try:
        reader = pa.ipc.open_stream(sys.stdin.buffer)
    except pa.ArrowInvalid:
        reader = ()  # sent no batch
    for number, batch in enumerate(reader):
        for name, count in write_batch(job, batch, f"{worker}-{number:05d}").items():
            counts[name] += count
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
