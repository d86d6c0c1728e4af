"""ExampleGen's fast path on the taxi sample as CSV, Parquet, JSON Lines and Avro: seconds per format.

    TF_USE_LEGACY_KERAS=1 .venv/bin/python benchmarks/formats_vs_csv.py --copies 1 --rounds 3

Each format holds the same rows (the taxi CSV read by pandas, `--copies` times);
the timing is one `Executor.Do` (types, split hash, encoding, columnar copy) in
this process or its workers. Prints a table of median seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from google.protobuf import json_format  # noqa: E402
from taxi_fixtures import TAXI_CSV  # noqa: E402
from tfx.proto import example_gen_pb2  # noqa: E402
from tfx.types import standard_artifacts, standard_component_specs  # noqa: E402

from components.example_gen import csv_executor  # noqa: E402
from components.example_gen.formats import executor as formats_executor  # noqa: E402


def _write(frame: pd.DataFrame, folder: str, fmt: str) -> None:
    os.makedirs(folder)
    path = os.path.join(folder, f"data.{fmt}")
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        import fastavro

        schema = fastavro.parse_schema(
            {
                "type": "record",
                "name": "Trip",
                "fields": [
                    {"name": name, "type": ["null", "string" if frame[name].dtype == object else "double"]}
                    for name in frame.columns
                ],
            }
        )
        records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        with open(path, "wb") as handle:
            fastavro.writer(handle, schema, records)


def _time(folder: str, fmt: str, out: str) -> float:
    input_config = example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single", pattern="*")])
    output_config = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[example_gen_pb2.SplitConfig.Split(name=n, hash_buckets=b) for n, b in (("train", 2), ("eval", 1))]
        )
    )
    if fmt == "csv":
        config, executor = csv_executor.make_custom_config([""], False), csv_executor.Executor()
    else:
        config, executor = formats_executor.make_custom_config(fmt, [""], False), formats_executor.Executor()
    properties = {
        standard_component_specs.INPUT_BASE_KEY: folder,
        standard_component_specs.INPUT_CONFIG_KEY: json_format.MessageToJson(input_config),
        standard_component_specs.OUTPUT_CONFIG_KEY: json_format.MessageToJson(output_config),
        standard_component_specs.CUSTOM_CONFIG_KEY: json_format.MessageToJson(config),
    }
    examples = standard_artifacts.Examples()
    examples.uri = out
    started = time.perf_counter()
    executor.Do({}, {standard_component_specs.EXAMPLES_KEY: [examples]}, properties)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1, help="the taxi sample repeated this many times")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    frame = pd.concat([pd.read_csv(TAXI_CSV)] * args.copies, ignore_index=True)
    with tempfile.TemporaryDirectory() as work:
        rows = []
        for fmt in ("csv", "parquet", "jsonl", "avro"):
            folder = os.path.join(work, fmt)
            _write(frame, folder, fmt)
            times = [_time(folder, fmt, os.path.join(work, f"out-{fmt}-{r}")) for r in range(args.rounds)]
            rows.append((fmt, os.path.getsize(os.path.join(folder, f"data.{fmt}")), statistics.median(times)))
    print(f"{len(frame):,} rows, median of {args.rounds} rounds")
    print(f"{'format':<8} {'file MB':>8} {'seconds':>8}")
    for fmt, size, seconds in rows:
        print(f"{fmt:<8} {size / 1e6:>8.1f} {seconds:>8.2f}")


if __name__ == "__main__":
    main()
