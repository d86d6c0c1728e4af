"""SavedModels run the way TensorFlow Serving runs them: a session over the
'serve' MetaGraphDef, fed and fetched by the SignatureDef's tensor names.

TensorFlow Serving loads every SavedModel, TF1 or TF2, into a session
(SavedModelBundle) and calls `Session::Run` with the SignatureDef's tensor
names. The embedded server does the same through
`tf.compat.v1.saved_model.loader.load` (variables restored, init ops and
assets run) and one callable per signature made with `Session::MakeCallable`.

Why not `tf.saved_model.load` and the signature functions:
- on TF1 models it refuses a whole model when one signature's TensorInfo shape
  disagrees with its graph (TF Serving's own `saved_model_half_plus_three`
  declares a rank-2 output as a scalar), and its functions check feed shapes
  that TensorFlow Serving's C++ session never checks;
- on TF2 models a function call costs about twice the session's callable per
  batch, and several times more for one row (figures in NOTES.md, "Serving
  measurements"). The callable releases the GIL while the graph runs.

`SESSION_CONFIG` runs each call's ops in the calling thread (inter-op
parallelism -1): the batch thread, or the event loop for small batches
(`batching`), without a hand-off to TensorFlow's inter-op pool, which costs
more wall time per call than it saves. Each op still splits its work over
the intra-op pool (TF_NUM_INTRAOP_THREADS, else one thread per CPU).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2

from compat import tensorflow as compat_tf
from serving.errors import InvalidArgument, Unimplemented, message
from serving.savedmodel import SERVE_TAG

__all__ = ["SESSION_CONFIG", "SessionSignature", "dense_signatures", "load_session"]

SESSION_CONFIG = config_pb2.ConfigProto(inter_op_parallelism_threads=-1, allow_soft_placement=True)


def dense_signatures(signature_defs: Mapping[str, meta_graph_pb2.SignatureDef]) -> bool:
    """True when every input and output of every signature is a plain named tensor.

    TF1 builders can write sparse (`coo_sparse`) TensorInfos, which have no
    single tensor name to feed or fetch; a TF2 model with one is served
    through its signature functions instead. (TF2 writes a ragged or other
    composite argument as its component tensors, each named.)
    """
    return all(
        info.WhichOneof("encoding") == "name"
        for signature_def in signature_defs.values()
        for info in (*signature_def.inputs.values(), *signature_def.outputs.values())
    )


def load_session(path: Path) -> tf.compat.v1.Session:
    """Loads the 'serve' graph of the SavedModel at `path` into a new session.

    Raises:
        RuntimeError, ValueError, tf.errors.OpError: The SavedModel does not load.
    """
    graph = tf.Graph()
    session = tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG)
    try:
        # The loader's deprecation notice ("use tf.saved_model.load") is for training code, not for a server.
        with graph.as_default(), compat_tf.silence_deprecation():
            tf.compat.v1.saved_model.loader.load(session, [SERVE_TAG], str(path))
    except BaseException:
        session.close()
        raise
    return session


class SessionSignature:
    """One SignatureDef of a session, called with keyword arguments by alias.

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
        self._error: InvalidArgument | Unimplemented | None = None
        self._callable = None
        if not dense_signatures({name: signature_def}):
            infos = [*signature_def.inputs.values(), *signature_def.outputs.values()]
            self._error = Unimplemented(
                message(
                    f"Signature {name!r} has sparse or composite inputs or outputs",
                    expected="dense tensors named in the SignatureDef (TensorInfo.name)",
                    received=f"encodings {sorted({str(info.WhichOneof('encoding')) for info in infos})}",
                    fix="Export the signature with dense tensors.",
                )
            )
            return
        if not self._outputs:
            # TensorFlow Serving loads such a model; a request on this signature fails in Session::Run.
            self._error = InvalidArgument(
                message(
                    f"Must specify at least one target to fetch or execute (signature {name!r} has no outputs)",
                    expected="a signature with at least one output",
                    received=f"inputs {self._inputs}, outputs []",
                    fix="Call a signature that has outputs (GET /v1/models/<name>/metadata lists them).",
                )
            )
            return
        # Session.run and make_callable check feed shapes in Python; the C++
        # callable, like TensorFlow Serving's Session::Run, does not.
        self._callable = compat_tf.make_callable_from_options(
            session,
            feed=[signature_def.inputs[alias].name for alias in self._inputs],
            fetch=[signature_def.outputs[alias].name for alias in self._outputs],
        )
        self._session = session  # the callable needs the session alive

    def __call__(self, **feeds: np.ndarray) -> Mapping[str, np.ndarray]:
        if self._error is not None:
            raise self._error
        values = self._callable(*(feeds[alias] for alias in self._inputs))
        return {alias: np.asarray(value) for alias, value in zip(self._outputs, values)}
