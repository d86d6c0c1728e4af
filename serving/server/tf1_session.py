"""TF1 SavedModels, run the way TensorFlow Serving runs them: a session over the
MetaGraphDef, fed and fetched by the SignatureDef's tensor names.

`tf.saved_model.load` cannot stand in for this on TF1 models: it refuses a
whole model when one signature's TensorInfo shape disagrees with its graph
(TF Serving's own `saved_model_half_plus_three` declares a rank-2 output as a
scalar), and its functions check feed shapes that TensorFlow Serving's C++
session never checks. So TF1 models are loaded with
`tf.compat.v1.saved_model.loader.load` (variables restored, init ops and assets
run, as TensorFlow Serving's SavedModelBundle does), and each signature becomes
a callable made with `Session::MakeCallable`, which feeds tensors of any shape:
only the ops that use a value decide whether it fits, as in TensorFlow Serving.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2

from serving.errors import Unimplemented, message
from serving.savedmodel import SERVE_TAG

__all__ = ["SessionSignature", "load_session"]


def load_session(path: Path) -> tf.compat.v1.Session:
    """Loads the 'serve' graph of the TF1 SavedModel at `path` into a new session.

    Raises:
        RuntimeError, ValueError, tf.errors.OpError: The SavedModel does not load.
    """
    graph = tf.Graph()
    session = tf.compat.v1.Session(graph=graph)
    with graph.as_default():
        tf.compat.v1.saved_model.loader.load(session, [SERVE_TAG], str(path))
    return session


class SessionSignature:
    """One SignatureDef of a TF1 session, called with keyword arguments by alias.

    Args:
        session: The session holding the loaded graph.
        name: The signature name (for messages).
        signature_def: Its SignatureDef: inputs and outputs are tensor names.

    Returns (when called):
        Output alias to numpy value.
    """

    def __init__(self, session: tf.compat.v1.Session, name: str, signature_def: meta_graph_pb2.SignatureDef) -> None:
        self._inputs = sorted(signature_def.inputs)
        self._outputs = sorted(signature_def.outputs)
        infos = [*signature_def.inputs.values(), *signature_def.outputs.values()]
        self._error: Unimplemented | None = None
        self._callable = None
        if any(info.WhichOneof("encoding") != "name" for info in infos):
            self._error = Unimplemented(
                message(
                    f"Signature {name!r} has sparse or composite inputs or outputs",
                    expected="dense tensors named in the SignatureDef (TensorInfo.name)",
                    received=f"encodings {sorted({str(info.WhichOneof('encoding')) for info in infos})}",
                    fix="Export the signature with dense tensors.",
                )
            )
            return
        options = config_pb2.CallableOptions(
            feed=[signature_def.inputs[alias].name for alias in self._inputs],
            fetch=[signature_def.outputs[alias].name for alias in self._outputs],
        )
        # Session.run and make_callable check feed shapes in Python; the C++
        # callable, like TensorFlow Serving's Session::Run, does not.
        self._callable = session._make_callable_from_options(options)  # noqa: SLF001
        self._session = session  # the callable needs the session alive

    def __call__(self, **feeds: np.ndarray) -> Mapping[str, np.ndarray]:
        if self._error is not None:
            raise self._error
        values = self._callable(*(feeds[alias] for alias in self._inputs))
        return {alias: np.asarray(value) for alias, value in zip(self._outputs, values)}
