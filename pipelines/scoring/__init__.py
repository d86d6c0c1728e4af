"""`python -m pipelines predict SPEC DATA --output FILE`: batch scoring with the pipeline's newest blessed model.

`blessed_model` finds the model in the pipeline root's ML Metadata;
`inputs` reads the data file in bounded batches and encodes each row as the
tf.Example ExampleGen would have written; `outputs` writes the CSV or Parquet
file incrementally and renames it into place at the end; `command` is the CLI
verb that ties them together.
"""

from __future__ import annotations

__all__ = ["blessed_model", "command", "inputs", "outputs"]
