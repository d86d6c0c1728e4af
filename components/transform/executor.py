"""Transform executor: TFX's, reading ExampleGen's columnar copy instead of decoding the examples again.

TFX's executor (`tfx/components/transform/executor.py`) does its work in a
`TransformProcessor`, which makes one TFXIO per dataset. While `Executor.Do`
runs, each dataset is read through `columnar_tfxio.from_copy`'s record
where the Examples artifact has a complete columnar copy of the split
(`components/common/columnar_copy.py`): the record batches TFX's decoder would
give. Analysis, transformation, caching and outputs are TFX's.

TFX has no hook to pass another processor: `compat.tfx.transform` swaps the
TFX-private pieces for the length of `Do`. Skipping the decoding makes
Transform several times faster on large data.

With tf.Transform's analyzer cache on (a window of spans), the cache it
writes is stamped with the newest span of the window (`CACHE_SPAN`), so
that the next run's resolver can pick the cache of an earlier window
(`components.resolver.analyzer_cache`).
"""

from __future__ import annotations

from tfx.components.transform import executor as tfx_executor
from tfx.types import standard_component_specs

from compat.tfx import transform as tfx_transform
from components.transform import columnar_tfxio

__all__ = ["CACHE_SPAN", "Executor", "columnar_reader", "stamp_cache_span"]

CACHE_SPAN = "span"  # the TransformCache's int custom property: the newest span of the window it was written for


def columnar_reader(tfxio, dataset):
    """A record reading the columnar copy for `dataset` when its split has a complete columnar copy, else None (TFX's).

    TFX makes a record for every dataset, also those it will not read (a span its analyzer cache holds):
    the record's source logs the datasets actually read (`columnar_tfxio.columnar_source`).
    """
    return columnar_tfxio.from_copy(tfxio, dataset.file_pattern)


def stamp_cache_span(input_dict, output_dict) -> None:
    """Sets `CACHE_SPAN` on the updated analyzer cache: the newest `span` of the Examples analyzed (none without spans)."""
    newest = max((examples.span for examples in input_dict.get(standard_component_specs.EXAMPLES_KEY, [])), default=0)
    if newest:
        for cache in output_dict.get(standard_component_specs.UPDATED_ANALYZER_CACHE_KEY, []):
            cache.set_int_custom_property(CACHE_SPAN, newest)


class Executor(tfx_executor.Executor):
    """TFX's Transform executor, reading datasets with a columnar copy through `columnar_reader`."""

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        with tfx_transform.reading_through(columnar_reader):
            super().Do(input_dict, output_dict, exec_properties)
        stamp_cache_span(input_dict, output_dict)
