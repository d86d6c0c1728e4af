"""ExampleGen: reads `data.path` (CSV, Parquet, Avro, JSON Lines, TFRecords or an image folder) or `data.sql` into split tf.Examples."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from components.example_gen.spans import split_span_path, static_range
from pipelines.builtins.record import Builtin, Compilation
from pipelines.spec.bigquery_source import bigquery_project
from pipelines.spec.data_rules import columns_used

if TYPE_CHECKING:
    from pipelines.spec.resolved import ResolvedSpec

__all__ = ["BUILTIN"]


def _example_gen(resolved: ResolvedSpec):
    from tfx.components import ImportExampleGen
    from tfx.proto import example_gen_pb2

    range_config = None
    if resolved.spans:  # `{SPAN}`/date placeholders: TFX's driver ingests one span per execution
        input_base, pattern = split_span_path(resolved.data_path)
        # The local runner names the span (a static range: catching up missed spans, `--span N`); a compiled
        # pipeline (airflow, beam, kubeflow) has none, so TFX's driver takes the newest span when each run starts.
        if resolved.ingest_span is not None:
            range_config = static_range(resolved.ingest_span)
    elif os.path.isdir(resolved.data_path):
        input_base, pattern = resolved.data_path, "*"
    else:
        input_base, pattern = os.path.split(resolved.data_path)
    input_config = example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single_split", pattern=pattern)])
    output_config = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[
                example_gen_pb2.SplitConfig.Split(name=name, hash_buckets=weight)
                for name, weight in resolved.spec.data.splits.items()
            ]
        )
    )
    if resolved.data_format == "bigquery":
        from tfx.extensions.google_cloud_big_query.example_gen.component import BigQueryExampleGen

        # Read on Kubeflow/Vertex by Beam's BigQuery source, billed to the URL's project.
        project = bigquery_project(resolved.spec.data.connection)
        gen = BigQueryExampleGen(query=resolved.spec.data.sql, output_config=output_config)
        return gen.with_beam_pipeline_args([f"--project={project}"])
    if resolved.data_format == "image_folder":
        from components.example_gen.image_component import ImageFolderExampleGen  # TFX: only when a pipeline is built

        # One tf.Example per image (`image`, `label`, `height`, `width`), split by a hash of the image's bytes.
        return ImageFolderExampleGen(input_base=resolved.data_path, output_config=output_config)
    if resolved.data_format in ("parquet", "avro", "jsonl"):
        from components.example_gen.formats import (
            executor as formats_executor,
        )  # TFX and Beam: only when a pipeline is built
        from components.example_gen.formats.component import FileExampleGen

        # Parquet/Avro/JSON Lines on CSV's fast path: nulls and `na_values` text missing, the used columns only.
        return FileExampleGen(
            input_base=input_base,
            input_config=input_config,
            output_config=output_config,
            range_config=range_config,
            custom_config=formats_executor.make_custom_config(
                resolved.data_format,
                resolved.spec.data.na_values,
                resolved.spec.data.checks.non_finite == "impute",
                columns_used(resolved.spec, resolved.schema_path),
                resolved.spec.data.flatten,
            ),
        )
    if resolved.data_format != "csv" and resolved.spans:
        from components.example_gen.component import SpanImportExampleGen  # TFX: only when a pipeline is built

        return SpanImportExampleGen(
            input_base=input_base, input_config=input_config, output_config=output_config, range_config=range_config
        )
    if resolved.data_format != "csv":
        return ImportExampleGen(
            input_base=input_base, input_config=input_config, output_config=output_config, range_config=range_config
        )
    from components.example_gen import csv_executor  # TFX and Beam: only when a pipeline is built
    from components.example_gen.component import CsvExampleGen

    # A BOM-safe header, `data.na_values`, `data.checks.non_finite: impute`, the separator, and only the
    # columns the spec uses at ingestion.
    data = resolved.spec.data
    return CsvExampleGen(
        input_base=input_base,
        input_config=input_config,
        output_config=output_config,
        range_config=range_config,
        custom_config=csv_executor.make_custom_config(
            data.na_values,
            data.checks.non_finite == "impute",
            resolved.csv_dialect,
            columns_used(resolved.spec, resolved.schema_path),
        ),
    )


def _build(compilation: Compilation, inputs: dict):
    return _example_gen(compilation.resolved)


BUILTIN = Builtin(
    id="ExampleGen",
    configured_by="data",
    inputs={},
    outputs={"examples": "Examples"},
    wiring=lambda spec: {},
    build=_build,
)
