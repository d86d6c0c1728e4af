"""A fixed seed for TFMA's jackknife, so one model on one eval split gets one confidence interval.

What: TFMA's `jackknife.ComputeWithConfidenceIntervals` deals each example to one
of its buckets with `np.random.RandomState(random_seed_for_testing)`; TFMA's
evaluator passes None, a seed drawn from the OS, so the bound that
`evaluation.confidence` gates on moved between reruns of one model on the same
rows (a new-user trial: lower bounds 0.7642 to 0.7706 over five reruns, one of
them NOT BLESSED). `seed_jackknife()` replaces the module attribute TFMA's
evaluator calls with a wrapper that passes `JACKKNIFE_SEED` when the caller
gives no seed.

Deterministic where the Evaluator's Beam work runs on one thread in one
process, as local runs do (`pipelines.beam.args.ONE_THREAD_COMPONENTS`): an
example's bucket then follows its place in the stream. On a distributed
runner each worker draws from its own copy of the seeded generator, so the
buckets may still differ between runs there.

Why a patch: TFX's Evaluator executor calls `tfma.ExtractEvaluateAndWriteResults`
without `random_seed_for_testing`, and TFMA's EvalConfig has no seed option.

Shape check (`shape_problem`): `jackknife.ComputeWithConfidenceIntervals`
takes `random_seed_for_testing`, and TFMA's metrics evaluator reaches it
through the `jackknife` module. Fallback: TFMA's own unseeded buckets (one
log line).
"""

from __future__ import annotations

import functools
import inspect
from typing import Optional

from compat import check_shape

__all__ = ["ENTRY", "JACKKNIFE_SEED", "seed_jackknife", "shape_problem"]

ENTRY = "compat.tfma.jackknife_seed"
JACKKNIFE_SEED = 20261129
_SEEDED = "_yaml_tfx_seeded"


def shape_problem() -> Optional[str]:
    """None when TFMA has what `seed_jackknife` replaces; else what differs."""
    from tensorflow_model_analysis.evaluators import jackknife, metrics_plots_and_validations_evaluator

    if getattr(metrics_plots_and_validations_evaluator, "jackknife", None) is not jackknife:
        return "the metrics evaluator no longer reaches ComputeWithConfidenceIntervals through `jackknife`"
    function = getattr(jackknife, "ComputeWithConfidenceIntervals", None)
    if function is None:
        return "jackknife.ComputeWithConfidenceIntervals is gone"
    if "random_seed_for_testing" not in inspect.signature(function).parameters:
        return "jackknife.ComputeWithConfidenceIntervals takes no random_seed_for_testing"
    return None


def seed_jackknife() -> bool:
    """Makes TFMA's jackknife use `JACKKNIFE_SEED` when no seed is given (idempotent).

    Returns:
        True when the jackknife is seeded; False where TFMA's shape differs (TFMA's own, unseeded).
    """
    from tensorflow_model_analysis.evaluators import jackknife

    if getattr(jackknife.ComputeWithConfidenceIntervals, _SEEDED, False):
        return True
    if not check_shape(ENTRY, shape_problem):
        return False
    original = jackknife.ComputeWithConfidenceIntervals

    @functools.wraps(original)
    def seeded(*args, random_seed_for_testing: Optional[int] = None, **kwargs):
        seed = JACKKNIFE_SEED if random_seed_for_testing is None else random_seed_for_testing
        return original(*args, random_seed_for_testing=seed, **kwargs)

    setattr(seeded, _SEEDED, True)
    jackknife.ComputeWithConfidenceIntervals = seeded
    return True
