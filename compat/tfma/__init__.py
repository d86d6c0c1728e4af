"""TensorFlow Model Analysis internals this project uses (see `compat` for the policy).

Written for tensorflow-model-analysis `PINNED`; `tests/compat/test_tfma.py`
fails when another version is installed, so that each entry below is re-read
before `PINNED` moves.

- `compat.tfma.fast_combiners` (entry "compat.tfma.fast_combiners"): TFMA's
  binary confusion-matrix and calibration-histogram combiners
  (`binary_confusion_matrices._BinaryConfusionMatrixCombiner`,
  `calibration_histogram._CalibrationHistogramCombiner`, both private)
  subclassed with an `add_input` that reads a plain example, or a plain batch,
  directly; reads their private settings and TFMA's private
  `_ThresholdEntry`, `_merge_entry` and `_bucket_index` to add to TFMA's own
  accumulators; also for a `class_id` sub key (a metric binarized per class),
  and overrides `_bucket_index` to put a NaN score in bucket 0 where TFMA's
  raises. `components/evaluator/fast_metrics.py` says which metrics use them.
- `compat.tfma.jackknife_seed` (entry "compat.tfma.jackknife_seed"): replaces
  the public `jackknife.ComputeWithConfidenceIntervals` module attribute, which
  TFMA's metrics evaluator calls, with a wrapper passing a fixed
  `random_seed_for_testing`, so `evaluation.confidence` gates one model on one
  eval split the same way every run (TFX's Evaluator passes no seed, TFMA's
  EvalConfig has none). `components/evaluator/confidence.py` calls it.

Importing this package imports no part of TFMA.
"""

from __future__ import annotations

__all__ = ["DISTRIBUTION", "PINNED"]

DISTRIBUTION = "tensorflow-model-analysis"
PINNED = "0.47.1"
