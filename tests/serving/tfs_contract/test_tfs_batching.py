"""TF Serving's batching-session tests, over the wire against the embedded server.

Translated from tensorflow/serving's `batching/batching_session_test.cc` and
`batching/batching_util_test.cc` (each test names the TEST it translates),
plus the checks TF Serving's model server makes on a `--batching_parameters_file`
(`bundle_factory_util.cc`, TensorFlow's `shared_batch_scheduler.h`).

Servers are real embedded servers on 127.0.0.1 with batching configured from
TF Serving's text format. They serve TF Serving's own half_plus_two (TF1,
y = 0.5x + 2, and `regress_x2_to_y3`: y3 = 0.5x2 + 3) and a probe exported
here: `half_plus_two` (any shape, like TF Serving's `matrix_half_plus_two`),
`two_inputs` (x, x2 -> y, y3) and `echo_<dtype>`; every probe signature also
answers `batch`: the number of rows of the batch its request ran in (TF
Serving's `BatchSizeCapturingSession`, seen from the client).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import numpy as np
import pytest
import tensorflow as tf
from google.protobuf import text_format
from prometheus_client.parser import text_string_to_metric_families
from serving_helpers import http
from tensorflow_serving.apis import predict_pb2
from tfs_contract_helpers import HALF_PLUS_TWO, Stubs, start_server, tfs_testdata

from serving import config as cfg
from serving.server import EmbeddedServer
from serving.server.inference.batching_options import BatchingOptions
from serving.server.observability import metrics as names

PROBE = "probe"
TFS_MODEL = "half_plus_two"
PREDICT = "/v1/models/{}:predict"
ECHO_DTYPES = {"float": tf.float32, "int32": tf.int32, "bool": tf.bool, "string": tf.string}
# Batches run when full or after 1 s ("won't trigger" in TF Serving's tests):
# requests that should share a batch fill it, so a test that passes fast
# shows they were merged.
MERGING = """
max_batch_size { value: 4 }
batch_timeout_micros { value: 1000000 }
num_batch_threads { value: 1 }
pad_variable_length_inputs: true
"""
NOT_PADDING = """
max_batch_size { value: 2 }
batch_timeout_micros { value: 1000000 }
num_batch_threads { value: 1 }
pad_variable_length_inputs: false
"""
ALLOWED_SIZES = """
max_batch_size { value: 4 }
batch_timeout_micros { value: 0 }
num_batch_threads { value: 1 }
allowed_batch_sizes: 1
allowed_batch_sizes: 3
allowed_batch_sizes: 4
"""

# BatchingWithLargeBatch and BatchingLazySplit (batching_session_test.cc), with splitting on.
SPLITTING = """
max_batch_size { value: 3 }
batch_timeout_micros { value: 1000000 }
num_batch_threads { value: 2 }
enable_large_batch_splitting { value: true }
max_execution_batch_size { value: 2 }
"""
SPLITTING_BY_ONE = """
max_batch_size { value: 2 }
batch_timeout_micros { value: 1000000 }
num_batch_threads { value: 1 }
enable_large_batch_splitting { value: true }
max_execution_batch_size { value: 1 }
"""


def _batch_of(x: tf.Tensor) -> tf.Tensor:
    """One value per row: the number of rows in the batch the model ran."""
    rows = tf.shape(x)[:1]
    return tf.fill(rows, tf.cast(rows[0], tf.float32))


class _Probe(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32, name="x")])
    def half_plus_two(self, x):
        return {"y": 0.5 * x + 2.0, "batch": _batch_of(x)}

    @tf.function(
        input_signature=[tf.TensorSpec(None, tf.float32, name="x"), tf.TensorSpec(None, tf.float32, name="x2")]
    )
    def two_inputs(self, x, x2):
        return {"y": 0.5 * x + 2.0, "y3": 0.5 * x2 + 3.0, "batch": _batch_of(x)}


def _echo(dtype: tf.DType) -> tf.types.experimental.ConcreteFunction:
    function = tf.function(lambda x: {"y": tf.identity(x), "batch": _batch_of(x)})
    return function.get_concrete_function(tf.TensorSpec(None, dtype, name="x"))


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("probe")
    probe = _Probe()
    signatures = {"serving_default": probe.half_plus_two, "two_inputs": probe.two_inputs}
    signatures.update({f"echo_{name}": _echo(dtype) for name, dtype in ECHO_DTYPES.items()})
    tf.saved_model.save(probe, str(base / "1"), signatures=signatures)
    return base


def _serve(tmp_path_factory, probe_dir: Path, batching_text: str):
    models = [cfg.model_config(PROBE, probe_dir), cfg.model_config(TFS_MODEL, tfs_testdata() / HALF_PLUS_TWO)]
    params = text_format.Parse(batching_text, cfg.BatchingParameters())
    return start_server(tmp_path_factory.mktemp("tfs_batching"), *models, batching=params)


def _server_fixture(name: str, batching_text: str):
    """The module-scoped fixture `name`: an embedded server batching with `batching_text`."""

    @pytest.fixture(scope="module", name=name)
    def server(tmp_path_factory, probe_dir):
        started = _serve(tmp_path_factory, probe_dir, batching_text)
        yield started
        started.stop()

    return server


merging = _server_fixture("merging", MERGING)
not_padding = _server_fixture("not_padding", NOT_PADDING)
splitting = _server_fixture("splitting", SPLITTING)
splitting_by_one = _server_fixture("splitting_by_one", SPLITTING_BY_ONE)
allowed_sizes = _server_fixture("allowed_sizes", ALLOWED_SIZES)


def _predict(server, model: str, body: dict) -> tuple[int, dict]:
    return http(server.rest_url, "POST", PREDICT.format(model), body)


def _concurrently(server, model: str, bodies: list[dict]) -> list[tuple[int, dict]]:
    """Sends the requests at once, one thread each; answers in request order."""
    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(lambda body: _predict(server, model, body), bodies))


def _outputs(answer: tuple[int, dict]) -> dict:
    status, body = answer
    assert status == 200, body
    return body["outputs"]


def _scraped(server, name: str, sample: str, **labels) -> float:
    """One sample's value on the metrics page (0 when absent), read with the Prometheus parser."""
    _, page = http(server.rest_url, "GET", cfg.PROMETHEUS_PATH)
    for family in text_string_to_metric_families(page["raw"]):
        if family.name == name:
            for found in family.samples:
                if found.name == sample and all(found.labels.get(k) == v for k, v in labels.items()):
                    return found.value
    return 0.0


def _batch_sizes(server, signature: str) -> tuple[float, float]:
    """(batches run, rows run) for half_plus_two's `signature`, from the metrics page."""
    labels = {"model_name": TFS_MODEL, "signature_name": signature}
    return (
        _scraped(server, names.BATCH_SIZE, f"{names.BATCH_SIZE}_count", **labels),
        _scraped(server, names.BATCH_SIZE, f"{names.BATCH_SIZE}_sum", **labels),
    )


def test_basic_two_requests_share_one_batch_and_get_their_own_rows(merging):
    """Basic: two 2-row requests fill a batch of 4; each gets its own rows."""
    answers = _concurrently(merging, PROBE, [{"inputs": {"x": [100.0, 42.0]}}, {"inputs": {"x": [71.5, 18.3]}}])
    first, second = (_outputs(answer) for answer in answers)
    assert first["y"] == [52.0, 23.0]
    assert second["y"] == pytest.approx([37.75, 11.15])
    assert first["batch"] == second["batch"] == [4.0, 4.0]


def test_basic_on_tf_servings_half_plus_two(merging):
    """Basic, on TF Serving's own half_plus_two: one batch of 4 rows, each caller its rows."""
    before = _batch_sizes(merging, "serving_default")
    answers = _concurrently(merging, TFS_MODEL, [{"instances": [100.0, 42.0]}, {"instances": [71.5, 18.3]}])
    assert [status for status, _ in answers] == [200, 200]
    assert answers[0][1]["predictions"] == [52.0, 23.0]
    assert answers[1][1]["predictions"] == pytest.approx([37.75, 11.15])
    runs, rows = _batch_sizes(merging, "serving_default")
    assert (runs - before[0], rows - before[1]) == (1, 4)


def test_queuing_latency_is_recorded_per_request_and_wrapped_runs_per_batch(merging):
    """BatchingSession's metrics: `queuing_latency` gets one value per request (TF Serving
    records it per task), `wrapped_run_count` one per batch run."""
    queuing = (names.BATCHING_QUEUING_LATENCY, f"{names.BATCHING_QUEUING_LATENCY}_count")
    # The parser names a counter's samples `<name>_total`; the page writes TF Serving's bare name.
    runs = (names.BATCHING_WRAPPED_RUN_COUNT, f"{names.BATCHING_WRAPPED_RUN_COUNT}_total")
    before = _scraped(merging, *queuing), _scraped(merging, *runs)
    _concurrently(merging, PROBE, [{"inputs": {"x": [1.0, 2.0]}}, {"inputs": {"x": [3.0, 4.0]}}])
    assert (_scraped(merging, *queuing), _scraped(merging, *runs)) == (before[0] + 2, before[1] + 1)


def test_queuing_latency_label_is_tf_servings_thread_pool_name(merging):
    """The `thread_pool_name` label TF Serving's model server writes on queuing_latency."""
    _concurrently(merging, PROBE, [{"inputs": {"x": [1.0, 2.0]}}, {"inputs": {"x": [3.0, 4.0]}}])
    count = f"{names.BATCHING_QUEUING_LATENCY}_count"
    assert _scraped(merging, names.BATCHING_QUEUING_LATENCY, count, thread_pool_name="") >= 2


def test_many_concurrent_requests_each_get_exactly_their_rows(merging):
    """Every caller gets its own rows back, whatever batch it shared (16 callers, batches of 4)."""
    bodies = [{"inputs": {"x": [float(i), float(i) + 0.5]}} for i in range(16)]
    for i, answer in enumerate(_concurrently(merging, PROBE, bodies)):
        assert _outputs(answer)["y"] == [0.5 * i + 2.0, 0.5 * (i + 0.5) + 2.0]


def test_multiple_signatures_are_batched_apart(merging):
    """MultipleSignatures: requests for x->y and x2->y3 never share a batch; each gets its signature's answer."""
    before = {name: _batch_sizes(merging, name) for name in ("serving_default", "regress_x2_to_y3")}
    bodies = [{"instances": [100.0, 42.0]}, {"signature_name": "regress_x2_to_y3", "instances": [100.0, 42.0]}] * 2
    answers = _concurrently(merging, TFS_MODEL, bodies)
    assert [body["predictions"] for _, body in answers] == [[52.0, 23.0], [53.0, 24.0]] * 2
    for name, (runs, rows) in before.items():
        assert _batch_sizes(merging, name) == (runs + 1, rows + 4)


def test_different_order_for_input_and_output_tensors(merging):
    """DifferentOrderForInputAndOutputTensors and SubsetOutputTensors, over gRPC: requests
    naming inputs and output filters in different orders share one batch, and each
    gets the outputs it asked for."""
    stubs = Stubs(merging.grpc_address)
    x0, x1 = np.array([8.0, 6.0], np.float32), np.array([100.0, 42.0], np.float32)

    def call(order: tuple[str, ...], output_filter: list[str]):
        request = predict_pb2.PredictRequest()
        request.model_spec.name = PROBE
        request.model_spec.signature_name = "two_inputs"
        for alias in order:
            request.inputs[alias].CopyFrom(tf.make_tensor_proto(x0 if alias == "x" else x1))
        request.output_filter.extend(output_filter)
        response = stubs.prediction.Predict(request, timeout=20)
        return {alias: tf.make_ndarray(proto).tolist() for alias, proto in response.outputs.items()}

    try:
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(call, ("x", "x2"), ["y3", "y", "batch"])
            second = pool.submit(call, ("x2", "x"), ["y"])
            first, second = first.result(), second.result()
    finally:
        stubs.close()
    assert first == {"y": [6.0, 5.0], "y3": [53.0, 24.0], "batch": [4.0, 4.0]}
    assert second == {"y": [6.0, 5.0]}


def test_request_whose_deadline_passed_in_the_queue_does_not_run(merging):
    """EnqueuedLongerThanTimeout: a request whose deadline passes while it waits for its
    batch never runs (TF Serving: RESOURCE_EXHAUSTED "Run() timeout exceeded while waiting
    in batching queue" for the task; its gRPC client sees DEADLINE_EXCEEDED either way)."""
    runs = (names.BATCHING_WRAPPED_RUN_COUNT, f"{names.BATCHING_WRAPPED_RUN_COUNT}_total")
    before = _scraped(merging, *runs)
    stubs = Stubs(merging.grpc_address)
    request = predict_pb2.PredictRequest()
    request.model_spec.name = PROBE
    request.inputs["x"].CopyFrom(tf.make_tensor_proto(np.array([100.0, 42.0], np.float32)))
    try:
        with pytest.raises(grpc.RpcError) as raised:
            stubs.prediction.Predict(request, timeout=0.2)
    finally:
        stubs.close()
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    time.sleep(1.5)  # past the batch timeout (1 s): the batch would have run by now
    assert _scraped(merging, *runs) == before


def test_batching_with_padding_pads_with_each_tensors_first_value(merging):
    """BatchingWithPadding (and CalculateMaxDimSizes): inputs of shapes [1,2,2], [1,3,3],
    [1,1,3] and [1,3,1] share a batch; each is padded to the largest size in each
    dimension past the first, with its own first value, and its caller gets the
    padded answer ([1,3,3]), as TF Serving answers."""
    inputs = [
        [[[1.0, 2.0], [3.0, 4.0]]],
        [[[5.0, 6.0, 7.0], [8.0, 9.0, 10.0], [11.0, 12.0, 13.0]]],
        [[[20.0, 22.0, 24.0]]],
        [[[30.0], [32.0], [34.0]]],
    ]
    answers = _concurrently(merging, PROBE, [{"inputs": {"x": x}} for x in inputs])
    outputs = [_outputs(answer) for answer in answers]
    assert outputs[0]["y"] == [[[2.5, 3.0, 2.5], [3.5, 4.0, 2.5], [2.5, 2.5, 2.5]]]
    assert outputs[1]["y"] == [[[4.5, 5.0, 5.5], [6.0, 6.5, 7.0], [7.5, 8.0, 8.5]]]
    assert outputs[2]["y"] == [[[12.0, 13.0, 14.0], [12.0, 12.0, 12.0], [12.0, 12.0, 12.0]]]
    assert outputs[3]["y"] == [[[17.0, 17.0, 17.0], [18.0, 17.0, 17.0], [19.0, 17.0, 17.0]]]
    assert [output["batch"] for output in outputs] == [[4.0]] * 4


@pytest.mark.parametrize(
    ("dtype", "short", "long", "padded"),
    [
        ("float", [1.5, 2.5], [7.0, 8.0, 9.0], [1.5, 2.5, 1.5]),
        ("int32", [3, 4], [7, 8, 9], [3, 4, 3]),
        ("bool", [True, False], [False, False, False], [True, False, True]),
        ("string", ["a", "b"], ["x", "y", "z"], ["a", "b", "a"]),
    ],
)
def test_add_padding_pads_every_dtype(merging, dtype, short, long, padded):
    """AddPadding: every dtype is padded (here: rows of 2 values padded to 3, with the first value)."""
    bodies = [{"signature_name": f"echo_{dtype}", "inputs": {"x": [x, x]}} for x in (short, long)]
    first, second = (_outputs(answer) for answer in _concurrently(merging, PROBE, bodies))
    assert first == {"y": [padded, padded], "batch": [4.0, 4.0]}
    assert second == {"y": [long, long], "batch": [4.0, 4.0]}


@pytest.mark.parametrize(
    ("short", "long", "expected"),
    [
        (
            np.ones((2, 1, 1, 1, 1, 1, 1)).tolist(),
            np.ones((2, 1, 1, 1, 1, 1, 2)).tolist(),
            "Only tensors with rank from 1 to 6 can be padded.",
        ),
        ([[], []], [[1.0, 2.0], [3.0, 4.0]], "Got empty tensor in batch of non-empty tensors."),
    ],
    ids=["AddPaddingTensorWithUnsupportedRank", "empty_tensor"],
)
def test_padding_refuses_what_tf_serving_cannot_pad(merging, short, long, expected):
    """AddPaddingTensorWithUnsupportedRank (rank 7) and PadTensor's empty-tensor check:
    the batch fails, and both its requests get TF Serving's words, as INVALID_ARGUMENT."""
    bodies = [{"signature_name": "echo_float", "inputs": {"x": x}} for x in (short, long)]
    for status, body in _concurrently(merging, PROBE, bodies):
        assert status == 400, body
        assert body["error"].startswith(expected)


def test_unequal_shapes_with_padding_off_run_in_separate_batches(not_padding):
    """UnequalTensorShapesWithPaddingTurnedOff, a deliberate difference: TF Serving puts both
    requests in one batch and fails both ("Tensors with name 'x' from different tasks have
    different shapes and padding is turned off..."); the embedded server queues requests by
    input shape, so each runs in its own batch and gets its own answer."""
    bodies = [{"inputs": {"x": [[[1.0, 2.0], [3.0, 4.0]]]}}, {"inputs": {"x": [[[5.0] * 3] * 3]}}]
    first, second = (_outputs(answer) for answer in _concurrently(not_padding, PROBE, bodies))
    assert first == {"y": [[[2.5, 3.0], [3.5, 4.0]]], "batch": [1.0]}
    assert second == {"y": [[[4.5] * 3] * 3], "batch": [1.0]}


def test_errors_of_one_request_do_not_reach_its_batch_neighbours(merging):
    """A request refused before it runs (a string for a float input) leaves the batch
    it would have joined alone: the two good requests still fill it and get their rows."""
    bodies = [{"inputs": {"x": [1.0, 2.0]}}, {"inputs": {"x": ["a", "b"]}}, {"inputs": {"x": [3.0, 4.0]}}]
    (good1, bad, good2) = _concurrently(merging, PROBE, bodies)
    assert bad[0] == 400
    assert _outputs(good1) == {"y": [2.5, 3.0], "batch": [4.0, 4.0]}
    assert _outputs(good2) == {"y": [3.5, 4.0], "batch": [4.0, 4.0]}


def test_singleton_batch(allowed_sizes):
    """SingletonBatch: with batch_timeout_micros 0 a lone request runs at once."""
    assert _predict(allowed_sizes, TFS_MODEL, {"instances": [100.0, 42.0]}) == (200, {"predictions": [52.0, 23.0]})


@pytest.mark.parametrize(
    ("rows", "batch"),
    [(1, 1.0), (3, 3.0), (2, 3.0), (4, 4.0)],
    ids=["AllowedBatchSizesNoPaddingNeeded", "exact_size", "AllowedBatchSizesRequirePadding", "max_batch_size"],
)
def test_allowed_batch_sizes_pad_to_the_next_allowed_size(allowed_sizes, rows, batch):
    """AllowedBatchSizesNoPaddingNeeded / RequirePadding: with allowed sizes [1, 3, 4], a batch
    of 2 rows runs as 3; the caller still gets only its own 2 rows."""
    x = [float(10 * i) for i in range(rows)]
    outputs = _outputs(_predict(allowed_sizes, PROBE, {"inputs": {"x": x}}))
    assert outputs == {"y": [0.5 * v + 2.0 for v in x], "batch": [batch] * rows}


def test_batching_with_large_batch_refuses_more_rows_than_max_batch_size(allowed_sizes):
    """BatchingWithLargeBatch, splitting off: with max_batch_size 4 a 5-row request is
    INVALID_ARGUMENT "Task size 5 is larger than maximum input batch size 4", over REST and gRPC,
    and never runs; a 4-row request still runs."""
    assert _outputs(_predict(allowed_sizes, PROBE, {"inputs": {"x": [1.0, 2.0, 3.0, 4.0]}}))["batch"] == [4.0] * 4
    status, body = _predict(allowed_sizes, PROBE, {"inputs": {"x": [1.0, 2.0, 3.0, 4.0, 5.0]}})
    assert status == 400
    assert body["error"].startswith("Task size 5 is larger than maximum input batch size 4. ")
    stubs = Stubs(allowed_sizes.grpc_address)
    request = predict_pb2.PredictRequest()
    request.model_spec.name = TFS_MODEL
    request.inputs["x"].CopyFrom(tf.make_tensor_proto(np.ones((5, 1), np.float32)))
    try:
        with pytest.raises(grpc.RpcError) as raised:
            stubs.prediction.Predict(request, timeout=20)
    finally:
        stubs.close()
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details().startswith("Task size 5 is larger than maximum input batch size 4. ")


def test_batching_with_large_batch_splits_a_request_over_batches(splitting):
    """BatchingWithLargeBatch, splitting on (max_batch_size 3, max_execution_batch_size 2): a
    1-row and a 3-row request at once are answered whole; no batch runs more than 2 rows."""
    one, three = _concurrently(splitting, PROBE, [{"inputs": {"x": [5.0]}}, {"inputs": {"x": [6.0, 7.0, 8.0]}}])
    assert _outputs(one)["y"] == [4.5]
    assert _outputs(three)["y"] == [5.0, 5.5, 6.0]
    assert max(_outputs(one)["batch"] + _outputs(three)["batch"]) == 2.0
    status, body = _predict(splitting, PROBE, {"inputs": {"x": [1.0, 2.0, 3.0, 4.0]}})
    assert status == 400
    assert body["error"].startswith("Task size 4 is larger than maximum input batch size 3. ")


def test_batching_lazy_split(splitting_by_one):
    """BatchingLazySplit (max_batch_size 2, max_execution_batch_size 1): two 2-row requests
    run as 1-row batches; each caller gets its own rows, on TF Serving's half_plus_two too."""
    first, second = _concurrently(
        splitting_by_one, PROBE, [{"inputs": {"x": [5.0, 6.0]}}, {"inputs": {"x": [1.0, 2.0]}}]
    )
    assert _outputs(first) == {"y": [4.5, 5.0], "batch": [1.0, 1.0]}
    assert _outputs(second) == {"y": [2.5, 3.0], "batch": [1.0, 1.0]}
    before = _batch_sizes(splitting_by_one, "serving_default")
    assert _predict(splitting_by_one, TFS_MODEL, {"instances": [1.0, 2.0]}) == (200, {"predictions": [2.5, 3.0]})
    runs, rows = _batch_sizes(splitting_by_one, "serving_default")
    assert (runs - before[0], rows - before[1]) == (2, 2)


def test_a_scalar_input_is_refused_by_batching(allowed_sizes):
    """TF Serving's batching session runs `ComputeTensorBatchSize` (batching/batching_util.h) on every request:
    a scalar is INVALID_ARGUMENT "Batching Run() input tensors must have at least one dimension"."""
    status, body = _predict(allowed_sizes, TFS_MODEL, {"inputs": 2.0})
    assert status == 400
    assert body["error"].startswith("Batching Run() input tensors must have at least one dimension. ")


def test_request_with_incompatible_input_tensor_sizes_is_refused(allowed_sizes):
    """RequestWithIncompatibleInputTensorSizes (batching_session_test.cc): inputs with different first dimensions
    are INVALID_ARGUMENT "Batching Run() input tensors must have equal 0th-dimension size"."""
    status, body = _predict(
        allowed_sizes, PROBE, {"signature_name": "two_inputs", "inputs": {"x": [2.0], "x2": [2.0, 4.0]}}
    )
    assert status == 400
    assert body["error"].startswith("Batching Run() input tensors must have equal 0th-dimension size. ")


# -- the batching parameters file ---------------------------------------------------------


def test_batching_parameters_file_fields_are_read():
    """Every BatchingParameters field our proto has, in TF Serving's text format."""
    text = """
        max_batch_size { value: 8 }
        batch_timeout_micros { value: 2500 }
        max_enqueued_batches { value: 7 }
        num_batch_threads { value: 3 }
        thread_pool_name { value: "my_pool" }
        allowed_batch_sizes: 2
        allowed_batch_sizes: 8
        pad_variable_length_inputs: true
    """
    options = BatchingOptions.from_proto(text_format.Parse(text, cfg.BatchingParameters()))
    assert options == BatchingOptions(
        max_batch_size=8,
        batch_timeout_micros=2500,
        num_batch_threads=3,
        max_enqueued_batches=7,
        allowed_batch_sizes=(2, 8),
        pad_variable_length_inputs=True,
    )


def test_batching_parameters_file_defaults_are_tf_servings():
    """Unset fields take TF Serving's defaults (SharedBatchScheduler::QueueOptions)."""
    options = BatchingOptions.from_proto(cfg.BatchingParameters())
    assert (options.max_batch_size, options.batch_timeout_micros, options.max_enqueued_batches) == (1000, 0, 10)
    assert (options.allowed_batch_sizes, options.pad_variable_length_inputs) == ((), False)


@pytest.mark.parametrize(
    ("text", "batch_rows"),
    [
        # bundle_factory_util.h: with splitting on, max_execution_batch_size is the largest batch run...
        (
            "max_batch_size { value: 8 }\nenable_large_batch_splitting { value: true }\nmax_execution_batch_size { value: 4 }",
            4,
        ),
        # ... and max_batch_size when it is not set; without splitting, max_execution_batch_size is ignored.
        ("max_batch_size { value: 8 }\nenable_large_batch_splitting { value: true }", 8),
        ("max_batch_size { value: 8 }\nmax_execution_batch_size { value: 4 }", 8),
    ],
    ids=["splitting_with_execution_size", "splitting_default_execution_size", "no_splitting"],
)
def test_batching_parameters_file_takes_large_batch_splitting_fields(text, batch_rows):
    """TF Serving's BatchingParameters fields 8 and 9 parse, and set the largest batch run."""
    options = BatchingOptions.from_proto(text_format.Parse(text, cfg.BatchingParameters()))
    assert (options.max_batch_size, options.batch_rows) == (8, batch_rows)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "max_batch_size { value: 4 }\nallowed_batch_sizes: 2\nallowed_batch_sizes: 8",
            "Last entry in allowed_batch_sizes must match max_batch_size; last entry was 8; expected 4",
        ),
        (
            "max_batch_size { value: 4 }\nallowed_batch_sizes: 4\nallowed_batch_sizes: 2",
            "Last entry in allowed_batch_sizes must match max_batch_size; last entry was 2; expected 4",
        ),
        (  # with splitting too, the model server wants the last entry to be max_batch_size
            "max_batch_size { value: 8 }\nenable_large_batch_splitting { value: true }\n"
            "max_execution_batch_size { value: 4 }\nallowed_batch_sizes: 2\nallowed_batch_sizes: 4",
            "Last entry in allowed_batch_sizes must match max_batch_size; last entry was 4; expected 8",
        ),
        ("num_batch_threads { value: 0 }", "num_batch_threads must be positive; was 0"),
        ("max_batch_size { value: 0 }", "input_batch_size_limit must be positive; was 0"),
        ("batch_timeout_micros { value: -1 }", "batch_timeout_micros must be non-negative; was -1"),
        (
            "max_batch_size { value: 8 }\nenable_large_batch_splitting { value: true }\n"
            "max_execution_batch_size { value: 16 }",
            "When enable_large_batch_splitting is true, input_batch_size_limit must be greater than or equal to "
            "max_execution_batch_size.",
        ),
        (
            "max_enqueued_batches { value: 0 }\nenable_large_batch_splitting { value: true }",
            "max_enqueued_batches must be positive; was 0",
        ),
    ],
    ids=[
        "FinalAllowedBatchSizeLargerThanMaxBatchSizeRejected",
        "UnsortedAllowedBatchSizesRejected",
        "splitting_last_allowed_not_max_batch_size",
        "num_batch_threads",
        "max_batch_size",
        "batch_timeout_micros",
        "splitting_execution_size_over_max_batch_size",
        "splitting_max_enqueued_batches_zero",
    ],
)
def test_bad_batching_parameters_are_refused_with_tf_servings_words(tmp_path, text, expected):
    """UnsortedAllowedBatchSizesRejected, FinalAllowedBatchSizeLargerThanMaxBatchSizeRejected and
    the scheduler's own checks: the server refuses the file (TF Serving: the model fails to load,
    and the server with it), TF Serving's words first, then what to change."""
    files = cfg.write_server_files(tmp_path, cfg.server_config(), batching=cfg.BatchingParameters())
    files.batching.write_text(text)
    with pytest.raises(cfg.ConfigError) as raised:
        EmbeddedServer.from_files(files, rest_port=0, grpc_port=0)
    assert str(raised.value).startswith(expected)
    assert "Expected " in str(raised.value)


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        (
            "max_batch_size { value: 4 }\nallowed_batch_sizes: 3\nallowed_batch_sizes: 2\nallowed_batch_sizes: 4",
            [3, 2, 4],
        ),
        (
            "max_batch_size { value: 8 }\nenable_large_batch_splitting { value: true }\n"
            "max_execution_batch_size { value: 4 }\nallowed_batch_sizes: 3\nallowed_batch_sizes: 2\n"
            "allowed_batch_sizes: 8",
            [3, 2, 8],
        ),
    ],
    ids=["without_splitting", "with_splitting"],
)
def test_allowed_batch_sizes_are_checked_by_their_last_entry_only(tmp_path, text, allowed):
    """TF Serving's model server checks only the last entry (bundle_factory_util.cc
    WrapSessionForBatching: "must match max_batch_size", with or without splitting; the order check
    is a TODO there, b/161641195, and CreateBasicBatchingSession's stricter checks are not on the
    model server's path), and pads a batch to the first listed size that holds it."""
    files = cfg.write_server_files(tmp_path, cfg.server_config(), batching=cfg.BatchingParameters())
    files.batching.write_text(text)
    server = EmbeddedServer.from_files(files, rest_port=0, grpc_port=0)
    assert list(server.options.batching.allowed_batch_sizes) == allowed


def test_max_enqueued_batches_zero_means_one_without_splitting():
    """SharedBatchScheduler::AddQueue rewrites max_enqueued_batches 0 to 1 when splitting is off
    ("many existing models rely on this option")."""
    params = text_format.Parse("max_enqueued_batches { value: 0 }", cfg.BatchingParameters())
    assert BatchingOptions.from_proto(params).max_enqueued_batches == 1
