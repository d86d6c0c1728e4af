"""`doctor SPEC`: advice per model type (images, text), on the CPU and on GPUs of each compute capability."""

from __future__ import annotations

import dataclasses

import pytest

from pipelines.doctor import NO_GPU_EXIT_CODE, main
from pipelines.load import parse_spec
from pipelines.model_advice import model_advice
from pipelines.spec import SpecError
from pipelines.spec.models import FeatureSpec, model_spec

SPEC = """
pipeline: {{name: advice}}
data: {{path: {csv}}}
features:
  text: {{transform: text, sequence_length: 64}}
label: {{name: topic, column: topic, task: classification}}
model: {{type: text_classifier, num_layers: 1, num_heads: 2}}
training: {{batch_size: 32}}
"""


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("advice")
    rows = "".join(f"some words number {i},{'ab'[i % 2]}\n" for i in range(40))
    (folder / "rows.csv").write_text("text,topic\n" + rows, encoding="utf-8")
    path = folder / "spec.yaml"
    path.write_text(SPEC.format(csv=folder / "rows.csv"), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def text_spec(spec_file):
    with open(spec_file, encoding="utf-8") as handle:
        return parse_spec(handle.read(), spec_file).spec


def _image(spec, size=(128, 128), training=None, transform=None, **model):
    model = {"type": "image_classifier", "backbone": "MobileNetV2", **model}
    return dataclasses.replace(
        spec,
        features={"photo": FeatureSpec(transform="image", image_size=list(size))},
        model=model_spec(**model),
        training=dataclasses.replace(spec.training, **(training or {})),
        transform=dataclasses.replace(spec.transform, **(transform or {})),
    )


def test_image_on_the_cpu_names_its_cost_and_every_cheaper_option(text_spec):
    lines = model_advice(_image(text_spec, backbone="ResNet50", weights="resnet.h5"), capabilities=[])
    assert lines[0].startswith(
        "image_classifier on the CPU is slow: ResNet50 at 128x128 is about 1.24 billion multiply-adds per image"
    )
    assert "a smaller `features.photo.image_size` (cost follows the pixels: [64, 64] is 4x cheaper)" in lines[0]
    assert "`model.backbone: MobileNetV2` (13x fewer multiply-adds than ResNet50)" in lines[0]
    assert "`model.frozen_layers: all` (only the head trains" in lines[0]
    assert not any("weights: null" in line for line in lines)
    assert lines[-1].startswith("Memory (ResNet50 at 128x128, float32): about ")
    assert lines[-1].endswith("no accelerator: training runs on the CPU, in host memory.")


def test_a_small_mobilenet_from_scratch_on_the_cpu_is_told_about_weights_not_about_size(text_spec):
    lines = model_advice(_image(text_spec, size=(64, 64), frozen_layers=0), capabilities=[])
    assert "Cheaper:" not in lines[0]
    assert any(line.startswith("`model.weights: null` trains the backbone from scratch") for line in lines)
    assert "per step at batch 32 (weights" in lines[-1]


@pytest.mark.parametrize(
    ("capabilities", "mixed_precision", "advice"),
    [
        ([(8, 0)], "auto", "Mixed precision pays here (compute capability 7.0 or more): `mixed_precision: auto`"),
        ([(7, 5)], "off", "Set `training.mixed_precision: auto`: every GPU has compute capability 7.0 or more"),
        ([(7, 5)], "bfloat16", "`mixed_precision: bfloat16` needs compute capability 8.0 or more"),
        ([(7, 0), (6, 1)], "auto", "does not pay here: a GPU has compute capability 6.1 (below 7.0"),
        ([(6, 0)], "float16", "set `mixed_precision: auto` (now float16)."),
    ],
)
def test_image_on_gpus_advises_mixed_precision_by_compute_capability(text_spec, capabilities, mixed_precision, advice):
    spec = _image(text_spec, size=(32, 32), training={"mixed_precision": mixed_precision})
    lines = model_advice(spec, capabilities)
    assert lines[0].startswith(f"image_classifier on {len(capabilities)} GPU(s): MobileNetV2 at 32x32")
    assert any(advice in line for line in lines), lines
    assert any(line.startswith("Try `training.xla: true`") for line in lines)
    # No GPU index given: its memory cannot be read, which the line says rather than claiming a CPU.
    assert lines[-1].endswith("the GPU's memory could not be read (pip install nvidia-ml-py) to say which batch fits.")


@pytest.mark.parametrize(
    ("materialize", "where"),
    [(False, "on every batch in the Trainer's tf.data pipeline"), (True, "once, in Transform")],
)
def test_image_on_gpus_says_where_decoding_runs_and_that_it_must_keep_up(text_spec, materialize, where):
    spec = _image(text_spec, size=(32, 32), training={"xla": True}, transform={"materialize": materialize})
    lines = model_advice(spec, [(9, 0)])
    decode = next(line for line in lines if line.startswith("Input: JPEG/PNG images are decoded"))
    assert where in decode and "decoding must keep up" in decode and "benchmarks/trainer_images.py" in decode
    assert any(line.startswith("XLA is on") for line in lines)


def test_the_memory_line_uses_the_policy_the_trainer_would_pick(text_spec):
    lines = model_advice(_image(text_spec, size=(32, 32)), [(8, 0)])
    assert lines[-1].startswith("Memory (MobileNetV2 at 32x32, mixed_float16): about ")


def test_a_transformer_is_told_its_sequence_squared_cost_and_the_baseline(text_spec):
    lines = model_advice(text_spec, capabilities=[])
    scores_mib = 1 * 2 * 64 * 64 * 2 * 4 * 32 / 2**20  # layers x heads x L x L, scores and probabilities, batch 32
    assert lines[0] == (
        "text_classifier (transformer): attention grows with sequence_length^2: 1 layer(s) x 2 head(s) x 64x64 "
        f"scores per example, about {scores_mib:.1f} MiB at batch 32; `features.text.sequence_length: 32` would "
        "quarter it. Pick the length most rows fit in."
    )
    assert lines[1].startswith("Baseline: `model.encoder: bag_of_embeddings`")
    assert len(lines) == 2  # no GPU lines on the CPU


def test_bag_of_embeddings_is_linear_and_gets_gpu_lines_on_a_gpu(text_spec):
    spec = dataclasses.replace(text_spec, model=model_spec(type="text_classifier", encoder="bag_of_embeddings"))
    lines = model_advice(spec, [(7, 5)])
    assert lines[0].startswith("text_classifier (bag_of_embeddings): cost grows linearly with")
    assert "(64)" in lines[0] and any("Mixed precision pays here" in line for line in lines)


@pytest.mark.parametrize("model", [{"type": "dnn"}, {"type": "wide_and_deep"}, {"build_model": "mine:build"}])
def test_table_and_user_models_get_no_model_lines(text_spec, model):
    assert model_advice(dataclasses.replace(text_spec, model=model_spec(**model)), [(8, 0)]) == []


def test_doctor_with_a_spec_prints_the_model_advice_after_the_machine_report(spec_file, capsys):
    assert main(spec_file) == NO_GPU_EXIT_CODE
    out = capsys.readouterr().out
    machine, model = out.split(f"Model `text_classifier` in {spec_file}:\n")
    assert "No GPU is visible to TensorFlow" in machine
    assert model.startswith("  text_classifier (transformer): attention grows with sequence_length^2")


def test_doctor_checks_the_spec_before_anything_else(tmp_path, capsys):
    with pytest.raises(SpecError) as error:
        main(str(tmp_path / "missing.yaml"))
    assert "spec file does not exist" in str(error.value.problems[0])
    assert capsys.readouterr().out == ""


def test_the_cli_passes_the_spec_to_doctor_and_reports_a_bad_spec_in_one_line(spec_file, tmp_path, capsys):
    from pipelines.cli import main as cli

    assert cli(["doctor", spec_file]) == NO_GPU_EXIT_CODE
    assert f"Model `text_classifier` in {spec_file}:" in capsys.readouterr().out

    assert cli(["doctor", str(tmp_path / "missing.yaml")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "spec file does not exist" in captured.err and "Traceback" not in captured.err


def test_xla_on_the_cpu_is_advised_off_for_an_image_model_and_not_mentioned_without_it(text_spec):
    with_xla = model_advice(_image(text_spec, training={"xla": True}), capabilities=[])
    assert any(line.startswith("`training.xla: true` on the CPU slows a backbone down") for line in with_xla)
    without = model_advice(_image(text_spec), capabilities=[])
    assert not any("training.xla" in line for line in without)
