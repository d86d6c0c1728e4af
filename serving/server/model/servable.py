"""One loaded model version (a servable) and its signatures.

Signatures are generic, as in TensorFlow Serving: every SignatureDef of the
'serve' graph is served under its own name, with the input and output aliases,
dtypes, shapes and method name read from saved_model.pb. They run in a
session by tensor name, as TensorFlow Serving runs them (`session`). TF1
SavedModels take any shape, checked only by the ops that use it; TF2 inputs
are checked against the SignatureDef first, as their functions would check
them. A TF2 model with a sparse TensorInfo (no tensor name to feed), or one
the session loader refuses, runs through `tf.saved_model.load`'s functions
instead, their arguments bound to the aliases by `binding.bind_arguments`.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import meta_graph_pb2
from tensorflow_serving.apis import get_model_metadata_pb2

from serving.custom_ops import register_ops_for
from serving.errors import (
    InvalidArgument,
    NotFound,
    ServingError,
    Unimplemented,
    did_you_mean,
    echoed,
    message,
)
from serving.savedmodel import SERVE_TAG, read_serving_graph, servable_signature_defs, written_by_tf1
from serving.server.model.binding import bind_arguments, function_keywords
from serving.server.model.session import SessionSignature, dense_signatures, load_session

__all__ = ["Servable", "Signature", "TensorSpec"]

log = logging.getLogger(__name__)


_MAX_FITTING_SHAPES = 256  # shapes remembered per TensorSpec as fitting it


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """An input or output of a signature, from its TensorInfo.

    Attributes:
        alias: The name clients use (the SignatureDef map key).
        dtype: The TensorFlow dtype.
        shape: Dimensions, None for unknown ones; None for unknown rank.
        tensor_name: The graph tensor's name (`serving_default_x:0`); empty for a sparse input.
    """

    alias: str
    dtype: tf.DType
    shape: tuple[int | None, ...] | None
    tensor_name: str = dataclasses.field(default="", compare=False)  # the TensorInfo's feed/fetch name
    numpy_dtype: np.dtype = dataclasses.field(init=False, repr=False, compare=False)
    is_string: bool = dataclasses.field(init=False, repr=False, compare=False)
    datatype_enum: int = dataclasses.field(init=False, repr=False, compare=False)
    _fitting: set[tuple[int, ...]] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Computed once: the request path compares dtypes on every call.
        is_string = self.dtype == tf.string
        object.__setattr__(self, "is_string", is_string)
        object.__setattr__(self, "datatype_enum", self.dtype.as_datatype_enum)
        object.__setattr__(self, "numpy_dtype", np.dtype(object) if is_string else np.dtype(self.dtype.as_numpy_dtype))
        object.__setattr__(self, "_fitting", set())

    def fits(self, shape: tuple[int, ...]) -> bool:
        """Whether a value of `shape` fits this spec's shape (an unknown size takes any size,
        an unknown rank any shape). The shapes that fit are remembered (a set lookup on the
        request path; at most `_MAX_FITTING_SHAPES`, so hostile shapes cannot grow it)."""
        if shape in self._fitting:
            return True
        dims = self.shape
        fits = dims is None or (len(shape) == len(dims) and all(d is None or d == v for d, v in zip(dims, shape)))
        if fits and len(self._fitting) < _MAX_FITTING_SHAPES:
            self._fitting.add(shape)
        return fits

    @classmethod
    def from_tensor_info(cls, alias: str, info: meta_graph_pb2.TensorInfo) -> TensorSpec:
        proto_shape = info.tensor_shape
        shape = None if proto_shape.unknown_rank else tuple(None if d.size < 0 else d.size for d in proto_shape.dim)
        # TF1 graphs name reference tensors (DT_INT32_REF, ...); they are fed and read as their base type.
        return cls(alias=alias, dtype=tf.dtypes.as_dtype(info.dtype).base_dtype, shape=shape, tensor_name=info.name)

    def describe(self) -> str:
        dims = "?" if self.shape is None else "[" + ", ".join("-1" if d is None else str(d) for d in self.shape) + "]"
        return f"{self.alias}: {self.dtype.name} {dims}"


@dataclasses.dataclass(frozen=True)
class Signature:
    """A servable signature: its aliases, method name and the function to run.

    Attributes:
        name: The SignatureDef map key.
        method_name: `tensorflow/serving/predict`, `.../classify` or `.../regress`.
        inputs: Input alias to spec (from the TensorInfo).
        outputs: Output alias to spec.
        function: The loaded signature function (keyword arguments, returns
            tensors or numpy arrays by output alias).
        arguments: Input alias to the function's keyword argument; None when
            they are the same.
        feeds_any_shape: True for TF1 SavedModels: any shape goes in, as in
            a TF1 session, so callers must not reject a shape the graph
            accepts. False for TF2 models, whose functions check shapes
            against their input signature (callers check them first).
        defaults: Input alias to the value fed when a PredictRequest leaves
            that input out (the SignatureDef's `defaults`, which TF 2.x writes
            for a function argument with a default value).
    """

    name: str
    method_name: str
    inputs: Mapping[str, TensorSpec]
    outputs: Mapping[str, TensorSpec]
    function: Callable[..., Mapping[str, tf.Tensor]] = dataclasses.field(repr=False)
    arguments: Mapping[str, str] | None = None
    feeds_any_shape: bool = False
    defaults: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict, repr=False)

    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Runs the signature on numpy inputs already checked against `inputs`.

        Args:
            inputs: Input alias to value, dtypes already the signature's.

        Returns:
            Output alias to numpy value.

        Raises:
            tf.errors.OpError: The graph rejected the values.
        """
        arguments = self.arguments
        feeds = {}
        for alias, value in inputs.items():
            # Numeric numpy arrays already have the signature's dtype (checked by
            # the caller) and go in as they are; strings need an explicit dtype
            # in TF2 functions (a session takes numpy object arrays).
            if value.dtype == object and not isinstance(self.function, SessionSignature):
                value = tf.convert_to_tensor(value, dtype=self.inputs[alias].dtype)
            feeds[arguments[alias] if arguments else alias] = value
        return {
            alias: value if isinstance(value, np.ndarray) else value.numpy()
            for alias, value in self.function(**feeds).items()
        }


def check_bundle(path: Path) -> None:
    """What TF Serving's `LoadSessionBundleOrSavedModelBundle` (session_bundle/oss/session_bundle_util.cc)
    refuses before TensorFlow reads anything, in its codes and words.

    Raises:
        Unimplemented: `path` holds `export.meta` (a SessionBundle).
        NotFound: `path` holds no saved_model.pb or .pbtxt (a file named like a version, say).
    """
    if (path / "export.meta").is_file():
        raise Unimplemented(
            message(
                "Session Bundle is deprecated and removed.",
                expected="a SavedModel (saved_model.pb, variables/)",
                received=f"a SessionBundle export (export.meta) in {path}",
                fix="Re-export the model with tf.saved_model.save (or a TF1 SavedModelBuilder).",
            )
        )
    if not ((path / "saved_model.pb").is_file() or (path / "saved_model.pbtxt").is_file()):
        raise NotFound(
            message(
                "Specified file path does not appear to contain a SavedModel bundle (should have a file called "
                f"`saved_model.pb`)\nSpecified file path: {path}",
                expected="a version directory holding saved_model.pb",
                received="a file" if path.is_file() else "no saved_model.pb in it",
                fix="Put only SavedModel version directories under the model's base path.",
            )
        )


class Servable:
    """A loaded model version. Thread-safe; counts requests in flight.

    Attributes:
        name: The model name.
        version: The version number (its directory name).
        path: The version directory.
        signatures: Signature name to `Signature`.
        signature_defs: The SignatureDef protos, for GetModelMetadata.
    """

    def __init__(
        self,
        name: str,
        version: int,
        path: Path,
        signatures: dict[str, Signature],
        signature_defs: dict[str, meta_graph_pb2.SignatureDef],
        keepalive: object = None,
    ) -> None:
        self.name = name
        self.version = version
        self.path = path
        self.signatures = signatures
        self.signature_defs = signature_defs
        self._keepalive = keepalive  # the loaded object (or TF1 session) owns the variables
        self._in_flight = 0
        self._lock = threading.Lock()

    @classmethod
    def load(cls, name: str, version: int, path: Path) -> Servable:
        """Loads `path` into a session (`tf.saved_model.load` for TF2 models with
        a sparse TensorInfo or that the session loader refuses) and binds its SignatureDefs.

        Args:
            name: The model name.
            version: The version number.
            path: The version directory (its name may be zero-padded).

        Returns:
            The servable, every SignatureDef with a function bound to it.

        Raises:
            Unimplemented, NotFound: TF Serving's loader refuses `path` (`check_bundle`).
            ValueError: No 'serve' graph, or a signature whose inputs match no
                argument of its function (`binding.BindingError`).
        """
        check_bundle(path)
        graph = read_serving_graph(path)
        register_ops_for(graph)  # tensorflow_text's ops, only for a model that uses them (serving.custom_ops)
        defs = servable_signature_defs(graph)
        tf1 = written_by_tf1(graph)
        loaded = None
        if tf1:
            loaded = load_session(path)
        elif dense_signatures(defs):
            try:
                loaded = load_session(path)
            except Exception as err:  # noqa: BLE001 - TF2's own loader is the fallback, and says what is wrong
                log.warning(
                    "%s version %s: the session loader failed (%s); using tf.saved_model.load", name, version, err
                )
        if loaded is not None:
            functions = {sig_name: SessionSignature(loaded, sig_name, sig_def) for sig_name, sig_def in defs.items()}
        else:
            loaded = tf.saved_model.load(str(path), tags=[SERVE_TAG])
            functions = loaded.signatures
        signatures = {}
        for sig_name, sig_def in defs.items():
            if sig_name not in functions:
                continue  # a SignatureDef without a function cannot be served
            function = functions[sig_name]
            in_session = isinstance(function, SessionSignature)
            arguments = None if in_session else bind_arguments(sig_name, sig_def, function_keywords(function))
            inputs = {a: TensorSpec.from_tensor_info(a, i) for a, i in sig_def.inputs.items()}
            signatures[sig_name] = Signature(
                name=sig_name,
                method_name=sig_def.method_name,
                inputs=inputs,
                outputs={a: TensorSpec.from_tensor_info(a, i) for a, i in sig_def.outputs.items()},
                function=function,
                arguments=None if arguments is None or all(a == k for a, k in arguments.items()) else arguments,
                feeds_any_shape=tf1,
                defaults={alias: tf.make_ndarray(value) for alias, value in sig_def.defaults.items()},
            )
        return cls(
            name, version, path, signatures, {k: v for k, v in defs.items() if k in signatures}, keepalive=loaded
        )

    def signature(
        self,
        signature_name: str,
        not_found: str = 'Serving signature name: "{name}" not found in signature def',
        error: type[ServingError] = InvalidArgument,
    ) -> Signature:
        """Returns the named signature.

        Args:
            signature_name: The signature's key.
            not_found: TensorFlow Serving's words for a missing one (they
                differ by API), `{name}` the signature's name.
            error: TensorFlow Serving's code for a missing one: INVALID_ARGUMENT
                (REST Predict's `GetInfoMap`, Classify, Regress, MultiInference),
                FAILED_PRECONDITION (gRPC Predict's `predict_util.cc`).

        Raises:
            InvalidArgument: The servable has no signature of that name (or `error`).
        """
        found = self.signatures.get(signature_name)
        if found is None:
            signature_name = echoed(signature_name)
            raise error(
                message(
                    not_found.format(name=signature_name),
                    expected=f"one of {sorted(self.signatures)}",
                    received=f"signature_name={signature_name!r} for model {self.name!r} version {self.version}",
                    fix="Set signature_name to a signature the model exports (GET .../metadata lists them)."
                    + did_you_mean(signature_name, self.signatures),
                )
            )
        return found

    def signature_def_map(self) -> get_model_metadata_pb2.SignatureDefMap:
        """The SignatureDefMap GetModelMetadata returns."""
        result = get_model_metadata_pb2.SignatureDefMap()
        for name, sig_def in self.signature_defs.items():
            result.signature_def[name].CopyFrom(sig_def)
        return result

    # In-flight accounting, so an unloaded version is reported UNLOADING until
    # the requests that already hold it have finished.
    def acquire(self) -> None:
        with self._lock:
            self._in_flight += 1

    def release(self) -> None:
        with self._lock:
            self._in_flight -= 1

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    def wait_idle(self, timeout: float) -> bool:
        """Waits until no request holds this servable; False on timeout."""
        deadline = time.monotonic() + timeout
        while self.in_flight:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True
