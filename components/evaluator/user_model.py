"""The ModelSpec of a model a TFX module file's `run_fn` exported (`training.module_file`).

Such a model has its own signatures: `serving_default` takes serialized
tf.Examples, as TFX's examples export it, and returns whatever the module
chose (TFX's penguin module: `{"outputs": probabilities}`). Our models'
`scores`/`probability` keys and `transform_features` signature may be absent.
The Evaluator reads the signatures from the SavedModel's `saved_model.pb`
(no model load) and fits the candidate's ModelSpec to them: the prediction key
is the serving signature's one output (several: TFMA's own lookup), and the
model's `transform_features` runs first only where the model has it (TFX's
examples name it so, and their labels may be among its outputs).
"""

from __future__ import annotations

import os

import tensorflow_model_analysis as tfma
from tensorflow.core.protobuf import saved_model_pb2

__all__ = ["fit_user_model_spec", "serving_signatures"]

_SERVING = "serving_default"
_PREPROCESSING = "transform_features"


def serving_signatures(model_dir: str) -> dict:
    """Signature name -> SignatureDef of the SavedModel in `model_dir` (its first MetaGraph)."""
    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(model_dir, "saved_model.pb"), "rb") as handle:
        saved_model.ParseFromString(handle.read())
    if not saved_model.meta_graphs:
        return {}
    # `__saved_model_init_op` and its kind are TensorFlow's, not signatures anyone calls.
    return {
        name: signature
        for name, signature in saved_model.meta_graphs[0].signature_def.items()
        if not name.startswith("__")
    }


def fit_user_model_spec(eval_config: tfma.EvalConfig, model_dir: str) -> None:
    """Fits `eval_config`'s ModelSpec (in place) to the signatures of the user model in `model_dir`.

    Raises:
      ValueError: the model has no `serving_default` signature, which TFMA, the Pusher and the server call.
    """
    signatures = serving_signatures(model_dir)
    if _SERVING not in signatures:
        raise ValueError(
            f"the model the module file's run_fn saved in {model_dir} has no `{_SERVING}` signature; it has "
            f"{sorted(signatures) or 'none'}. Save it with `signatures={{'{_SERVING}': ...}}` taking serialized "
            "tf.Examples, as TFX's examples do (`training.module_file`)."
        )
    outputs = list(signatures[_SERVING].outputs)
    for spec in eval_config.model_specs:
        spec.prediction_key = outputs[0] if len(outputs) == 1 else ""
        del spec.preprocessing_function_names[:]
        if _PREPROCESSING in signatures:
            spec.preprocessing_function_names.append(_PREPROCESSING)
