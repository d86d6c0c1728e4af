"""StatisticsGen executor: TFDV on ExampleGen's columnar copy instead of decoding the examples again.

TFX's executor (`tfx/components/statistics_gen/executor.py`) reads every
split's TFRecords and decodes each tf.Example into Arrow before TFDV runs. When
the Examples artifact carries a complete columnar copy
(`components/common/columnar_copy.py`, written by our fast ExampleGen) this
executor gives TFDV those record batches instead: the same rows in the same
decoded form, so the statistics are the same up to float rounding (sums in
another order) and TFDV's approximate quantiles, several times faster than
through TFX's reading, whose decoding is most of its time.

Everything else is TFX's: options, `exclude_splits`, `sample_rate_by_split`,
the schema input, the artifact's properties and files. Without a copy of
every split, or with options that change how examples are read (sharded
output, `experimental_filter_read_paths`, custom split patterns), TFX's own
`Do` runs.
"""

from __future__ import annotations

import os
from typing import Any

import apache_beam as beam
import tensorflow_data_validation as tfdv
from absl import logging
from tfx.components.statistics_gen import executor as tfx_executor
from tfx.components.util import examples_utils
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import io_utils, json_utils, stats_utils

from components.common import columnar_copy

__all__ = ["Executor"]


# TFDV samples whole record batches (`stats_api._sample_at_rate`), so a sampled
# split is read in batches no larger than TFX's reader makes (tfx_bsl's
# `batch_util._BATCH_SIZE_CAP`); unsampled, each file's batch goes whole.
SAMPLED_BATCH_ROWS = 1000


class _ReadColumnarFiles(beam.DoFn):
    def __init__(self, batch_rows: int | None):
        self._batch_rows = batch_rows

    def process(self, path: str):
        for batch in columnar_copy.read_batches(path):
            yield from columnar_copy.slices(batch, self._batch_rows)


class Executor(tfx_executor.Executor):
    """TFX's StatisticsGen executor, reading the columnar copy of the examples where there is a complete one."""

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        examples = artifact_utils.get_single_instance(input_dict[standard_component_specs.EXAMPLES_KEY])
        splits = _splits(examples, exec_properties)
        options = _stats_options(input_dict, exec_properties)
        files = {split: columnar_copy.split_files(examples.uri, split) for split in splits}
        if (
            not splits
            or any(found is None for found in files.values())
            or examples.has_custom_property(examples_utils.CUSTOM_SPLIT_PATTERN_PROPERTY_NAME)
            or exec_properties.get(standard_component_specs.SHARDED_STATS_OUTPUT_KEY)
            or options.experimental_filter_read_paths
        ):
            return super().Do(input_dict, output_dict, exec_properties)
        self._log_startup(input_dict, output_dict, exec_properties)
        sample_rates = {split: options.sample_rate or 1.0 for split in splits}
        declared = json_utils.loads(exec_properties.get(standard_component_specs.SAMPLE_RATE_BY_SPLIT_KEY, "null"))
        sample_rates.update({s: r for s, r in (declared or {}).items() if s in sample_rates})
        statistics = artifact_utils.get_single_instance(output_dict[standard_component_specs.STATISTICS_KEY])
        statistics.split_names = artifact_utils.encode_split_names(splits)
        statistics.span = examples.span
        statistics.set_string_custom_property(tfx_executor.STATS_DASHBOARD_LINK, _dashboard_link(statistics))
        statistics.set_json_value_custom_property(
            tfx_executor.SAMPLE_RATE_BY_SPLIT_PROPERTY_NAME, json_utils.dumps(sample_rates)
        )
        with self._make_beam_pipeline() as pipeline:
            for split in splits:
                logging.info("Generating statistics for split %s from the columnar copy of the examples.", split)
                split_options = tfdv.StatsOptions.from_json(options.to_json())
                if split in (declared or {}):
                    split_options.sample_rate = sample_rates[split]
                output = os.path.join(artifact_utils.get_split_uri([statistics], split), tfx_executor.DEFAULT_FILE_NAME)
                _ = (
                    pipeline
                    | f"ListColumnarFiles[{split}]" >> beam.Create(files[split])
                    | f"ReadColumnarFiles[{split}]"
                    >> beam.ParDo(_ReadColumnarFiles(SAMPLED_BATCH_ROWS if split_options.sample_rate else None))
                    | f"GenerateStatistics[{split}]" >> tfdv.GenerateStatistics(split_options)
                    | f"SortFeatures[{split}]" >> beam.Map(_sorted_features)
                    | f"WriteStatsOutput[{split}]" >> tfdv.WriteStatisticsToBinaryFile(output)
                )
        return None


def _splits(examples, exec_properties: dict[str, Any]) -> list[str]:
    excluded = json_utils.loads(exec_properties.get(standard_component_specs.EXCLUDE_SPLITS_KEY, "null")) or []
    if not isinstance(excluded, list):
        raise ValueError(
            f"Invalid value received for `exclude_splits`. Expected a JSON list of split names. Received: {excluded!r}."
        )
    return [s for s in artifact_utils.decode_split_names(examples.split_names) if s not in excluded]


def _stats_options(input_dict, exec_properties: dict[str, Any]) -> tfdv.StatsOptions:
    raw = exec_properties.get(standard_component_specs.STATS_OPTIONS_JSON_KEY)
    options = tfdv.StatsOptions.from_json(raw) if raw else tfdv.StatsOptions()
    schemas = input_dict.get(standard_component_specs.SCHEMA_KEY)
    if schemas:
        if options.schema:
            raise ValueError(
                "A schema was given both as StatisticsGen's `schema` input and in its `stats_options`. "
                "Expected at most one. Remove one of them."
            )
        uri = artifact_utils.get_single_uri(schemas)
        options.schema = io_utils.SchemaReader().read(io_utils.get_only_uri_in_dir(uri))
    return options


def _dashboard_link(statistics) -> str:
    try:
        return stats_utils.generate_stats_dashboard_link(statistics)
    except Exception:  # noqa: BLE001 - TFX logs and stores '' too
        logging.exception("Failed to generate the stats dashboard link.")
        return ""


def _sorted_features(statistics):
    """Features in name order, as TFX's path gives them (TFDV's order follows the batches it merged first)."""
    for dataset in statistics.datasets:
        ordered = sorted(dataset.features, key=lambda f: tuple(f.path.step) or (f.name,))
        copies = [type(f).FromString(f.SerializeToString()) for f in ordered]
        del dataset.features[:]
        dataset.features.extend(copies)
    return statistics
