"""Mixed precision and XLA: the policy chosen, applied to the layers, and a bfloat16 + XLA run on CPU."""

from __future__ import annotations

import os

import pytest
import tensorflow as tf
from trainer_fixtures import make_fn_args, read_summary

from components.trainer import run_fn as run_fn_module
from components.trainer.devices import precision

SMALL_MODEL = {"type": "wide_and_deep", "hidden_units": [8], "embedding_dim": 2}
BF16_XLA = {"mixed_precision": "bfloat16", "xla": True, "train_steps": 10, "steps_per_execution": 5, "eval_steps": 1}


@pytest.mark.parametrize(
    ("requested", "capabilities", "expected"),
    [
        ("auto", [], "float32"),  # CPU
        ("auto", [(7, 0), (8, 6)], "mixed_float16"),
        ("auto", [(8, 0), (6, 1)], "float32"),  # one GPU without Tensor Cores
        ("auto", [None], "float32"),
        ("off", [(9, 0)], "float32"),
        ("float16", [], "mixed_float16"),
        ("bfloat16", [], "mixed_bfloat16"),
    ],
)
def test_policy_follows_the_request_and_the_gpus(requested, capabilities, expected):
    assert precision.choose_policy(requested, capabilities) == expected


def test_an_unknown_precision_names_the_choices():
    with pytest.raises(ValueError, match=r"Expected one of auto, off, float16, bfloat16\. Received: mixed_precision="):
        precision.choose_policy("fp8", [])


def test_policy_scope_restores_the_global_policy():
    with precision.policy_scope("mixed_bfloat16"):
        assert tf.keras.mixed_precision.global_policy().name == "mixed_bfloat16"
    assert tf.keras.mixed_precision.global_policy().name == "float32"


@pytest.fixture(scope="module")
def bfloat16_xla_run(trainer_data, tmp_path_factory):
    """A real `run_fn` run with bfloat16 + XLA; returns its FnArgs and the model it built and trained."""
    fn_args = make_fn_args(trainer_data, str(tmp_path_factory.mktemp("bf16")), BF16_XLA, True, SMALL_MODEL)
    built = []
    build = run_fn_module.build_compiled_model
    with pytest.MonkeyPatch.context() as patch:  # a spy: keeps a reference, changes nothing
        patch.setattr(run_fn_module, "build_compiled_model", lambda *args: built.append(build(*args)) or built[-1])
        run_fn_module.run_fn(fn_args)
    return fn_args, built[0]


def test_bfloat16_computes_in_bfloat16_with_a_float32_output_layer(bfloat16_xla_run):
    _, model = bfloat16_xla_run
    dense = [layer for layer in model.layers if isinstance(layer, tf.keras.layers.Dense)]
    hidden, output = dense[:-1], model.get_layer("prediction")
    assert hidden and all(layer.compute_dtype == "bfloat16" and layer.dtype == "float32" for layer in hidden)
    assert output.compute_dtype == "float32"
    assert model.outputs[0].dtype == tf.float32
    assert tf.keras.mixed_precision.global_policy().name == "float32"  # not leaked


def _xla_must_compile_nodes(graph_def) -> int:
    nodes = list(graph_def.node) + [n for f in graph_def.library.function for n in f.node_def]
    return sum(1 for node in nodes if "_XlaMustCompile" in node.attr and node.attr["_XlaMustCompile"].b)


def test_xla_compiles_the_train_step(bfloat16_xla_run):
    _, model = bfloat16_xla_run
    assert model.jit_compile
    traced = model.train_tf_function._list_all_concrete_functions()  # noqa: SLF001 - what fit traced
    assert traced and all(_xla_must_compile_nodes(f.graph.as_graph_def()) >= 1 for f in traced)
    assert int(model.optimizer.iterations.numpy()) == 10


def test_run_fn_trains_and_exports_with_bfloat16_and_xla_on_cpu(bfloat16_xla_run):
    fn_args, _ = bfloat16_xla_run
    summary = read_summary(fn_args)
    assert (summary["precision_policy"], summary["xla"], summary["optimizer_steps"]) == ("mixed_bfloat16", True, 10)
    served = tf.saved_model.load(fn_args.serving_model_dir).signatures["serving_default"]
    assert {name: spec.dtype for name, spec in served.structured_outputs.items()}["probability"] == tf.float32
    assert os.path.isfile(os.path.join(fn_args.serving_model_dir, "saved_model.pb"))
