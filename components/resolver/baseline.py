"""The baseline for evaluation: the latest blessed model other than the candidate.

TFX's LatestBlessedModelStrategy returns the latest blessed model even when
that is the very model being evaluated (a cached Trainer on a rerun). The
Evaluator's inputs then change, it runs again, compares the model with
itself, and the Pusher pushes a duplicate version. Leaving the candidate out
keeps a rerun's inputs identical, so every step is served from cache.
"""

from __future__ import annotations

from typing import Optional

from tfx import types
from tfx.dsl.components.common import resolver
from tfx.types import standard_artifacts

__all__ = ["LatestBlessedBaselineStrategy", "CANDIDATE_KEY", "MODEL_KEY", "BLESSING_KEY"]

CANDIDATE_KEY = "candidate"
MODEL_KEY = "model"
BLESSING_KEY = "model_blessing"


class LatestBlessedBaselineStrategy(resolver.ResolverStrategy):
    """Resolves {model, model_blessing} of the latest blessed non-candidate model."""

    def resolve_artifacts(
        self, store, input_dict: dict[str, list[types.Artifact]]
    ) -> Optional[dict[str, list[types.Artifact]]]:
        candidates = {a.id for a in input_dict.get(CANDIDATE_KEY, [])}
        models = sorted(input_dict.get(MODEL_KEY, []), key=lambda a: a.id, reverse=True)
        blessed = {
            b.get_int_custom_property("current_model_id"): b
            for b in input_dict.get(BLESSING_KEY, [])
            if isinstance(b, standard_artifacts.ModelBlessing) and b.get_int_custom_property("blessed") == 1
        }
        for model in models:
            if model.id in blessed and model.id not in candidates:
                return {MODEL_KEY: [model], BLESSING_KEY: [blessed[model.id]], CANDIDATE_KEY: []}
        return {MODEL_KEY: [], BLESSING_KEY: [], CANDIDATE_KEY: []}
