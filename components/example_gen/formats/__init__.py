"""ExampleGen for Parquet, Avro and JSON Lines files (`data.format: parquet | avro | jsonl`).

`readers` turns each format into Arrow record batches and, for the fast
path shared with CSV (`components/example_gen/fast_csv.py`), into batches of
text cells; `executor` is the ExampleGen executor and `component` its
component. Each file's format follows `data.format`, else its name's ending.
"""

from __future__ import annotations

__all__ = ["FORMATS", "ENDINGS", "format_of"]

FORMATS = ("parquet", "avro", "jsonl")
# Name endings -> format (a `.jsonl.gz` file is read decompressed).
ENDINGS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".avro": "avro",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".jsonl.gz": "jsonl",
    ".ndjson.gz": "jsonl",
}


def format_of(path: str) -> str | None:
    """The format a file's name ending says (`data.parquet` -> `parquet`), or None."""
    lowered = path.lower()
    return next((fmt for ending, fmt in ENDINGS.items() if lowered.endswith(ending)), None)
