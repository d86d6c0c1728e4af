"""RowFilter: keeps the examples whose row satisfies `expression`, in every split.

Place it between ExampleGen and the rest of the pipeline:

    steps:
      - name: DropShortTrips
        uses: row_filter
        inputs: {examples: ExampleGen.examples}
        parameters: {expression: "trip_miles > 0.5"}
        replaces: ExampleGen.examples

The output records `rows_kept`, `rows_dropped` and, per split,
`rows_dropped_<split>` as ML Metadata custom properties.

`DropMissing` keeps the rows that hold a value in one column: the compiled
pipeline of a spec with `label.missing: drop` runs it on the label column
(`pipelines.spec.label_missing`), recording the same properties.
"""

import os

from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

from components.row_filter.executor import drop_missing_split, filter_split

__all__ = ["RowFilter", "DropMissing"]


@component
def RowFilter(
    examples: InputArtifact[standard_artifacts.Examples],
    filtered_examples: OutputArtifact[standard_artifacts.Examples],
    expression: Parameter[str],
    keep_missing: Parameter[bool] = False,
) -> None:
    """Drops rows where `expression` is false (or reads a missing value, unless `keep_missing`)."""

    _copy_splits(
        examples, filtered_examples, lambda source, target: filter_split(source, target, expression, keep_missing)
    )


@component
def DropMissing(
    examples: InputArtifact[standard_artifacts.Examples],
    filtered_examples: OutputArtifact[standard_artifacts.Examples],
    column: Parameter[str],
) -> None:
    """Drops the rows that hold no value in `column` (a missing label, with `label.missing: drop`)."""

    _copy_splits(examples, filtered_examples, lambda source, target: drop_missing_split(source, target, column))


def _copy_splits(examples, filtered_examples, copy_split) -> None:
    """Runs `copy_split(source_dir, target_dir) -> (kept, dropped)` on every split; records the counts."""
    from tfx.components.util import examples_utils
    from tfx.types import artifact_utils

    filtered_examples.split_names = examples.split_names
    filtered_examples.span = examples.span
    filtered_examples.version = examples.version
    examples_utils.set_payload_format(filtered_examples, examples_utils.get_payload_format(examples))
    total_kept = total_dropped = 0
    for split in artifact_utils.decode_split_names(examples.split_names):
        kept, dropped = copy_split(
            os.path.join(examples.uri, f"Split-{split}"), os.path.join(filtered_examples.uri, f"Split-{split}")
        )
        filtered_examples.set_int_custom_property(f"rows_dropped_{split}", dropped)
        total_kept += kept
        total_dropped += dropped
    filtered_examples.set_int_custom_property("rows_kept", total_kept)
    filtered_examples.set_int_custom_property("rows_dropped", total_dropped)
