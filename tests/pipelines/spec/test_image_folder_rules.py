"""`validate` on image folders: the summary and warnings of `rule_image_folder`, and the image/text spec rules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from image_folders import write_class_folder, write_image_folder

from pipelines.load import load_spec

IMAGE_SPEC = {
    "pipeline": {"name": "pets"},
    "data": {"path": "images"},
    "features": {"image": {"transform": "image", "image_size": [32, 32]}},
    "label": {"name": "label", "column": "label"},
    "model": {"type": "image_classifier"},
    "evaluation": {"metrics": ["accuracy"]},
}


def _write_spec(folder: Path, spec: dict) -> Path:
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False, default_flow_style=None), encoding="utf-8")
    return path


def test_validate_prints_the_summary_and_names_unreadable_files(tmp_path, capsys):
    truth = write_image_folder(tmp_path / "images")
    resolved = load_spec(str(_write_spec(tmp_path, IMAGE_SPEC)), cwd=str(tmp_path))
    assert resolved.data_format == "image_folder" and resolved.columns == ("image", "label", "height", "width")
    err = capsys.readouterr().err
    assert f"{len(truth.images)} image(s) in 2 classes (cat: 6, dog: 5)" in err
    assert "sizes (height x width) from 12x12 to 64x48" in err and "formats: JPEG 4, PNG 7" in err
    assert f"{len(truth.skipped)} file(s) in {tmp_path / 'images'} are not readable" in err
    for path in truth.skipped:
        assert path in err


def test_many_unreadable_files_are_named_up_to_ten_then_counted(tmp_path, capsys):
    write_class_folder(tmp_path / "images", "cat", 3)
    write_class_folder(tmp_path / "images", "dog", 3, seed=1)
    for i in range(14):
        (tmp_path / "images" / "dog" / f"broken{i:02d}.png").write_bytes(b"not an image")
    load_spec(str(_write_spec(tmp_path, IMAGE_SPEC)), cwd=str(tmp_path))
    err = capsys.readouterr().err
    assert "14 file(s)" in err and "broken09.png" in err and "broken10.png" not in err and "and 4 more" in err


def test_class_whose_every_image_is_unreadable_is_an_error(tmp_path, spec_problems):
    write_class_folder(tmp_path / "images", "cat", 3)
    (tmp_path / "images" / "dog").mkdir()
    (tmp_path / "images" / "dog" / "1.jpg").write_bytes(b"\xff\xd8 truncated")
    problems = spec_problems(_write_spec(tmp_path, IMAGE_SPEC))
    assert [p.path for p in problems] == ["data.path"]
    message = problems[0].message
    assert "class `dog` has no readable image" in message and str(tmp_path / "images" / "dog" / "1.jpg") in message


def test_rare_class_is_a_warning(tmp_path, capsys):
    write_class_folder(tmp_path / "images", "common", 30)
    write_class_folder(tmp_path / "images", "rare", 2, seed=1)
    load_spec(str(_write_spec(tmp_path, IMAGE_SPEC)), cwd=str(tmp_path))
    err = capsys.readouterr().err
    assert "warning: data.path: class `rare` has 2 image(s), far fewer than `common` (30)" in err


def test_balanced_classes_give_no_warning(tmp_path, capsys):
    write_class_folder(tmp_path / "images", "a", 5)
    write_class_folder(tmp_path / "images", "b", 4, seed=1)
    load_spec(str(_write_spec(tmp_path, IMAGE_SPEC)), cwd=str(tmp_path))
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("overrides", "path", "message"),
    [
        (
            {"features": {"height": {"transform": "image", "image_size": [32, 32]}}},
            "features.height.transform",
            "needs the encoded images, but `height` holds each image's height",
        ),
        (
            {"features": {"image": {"transform": "text", "sequence_length": 8}}},
            "features.image.transform",
            "holds encoded images",
        ),
        (
            {
                "features": {
                    "image": {"transform": "image", "image_size": [32, 32]},
                    "width": {"transform": "text", "sequence_length": 4},
                },
                "model": {"type": "text_classifier"},
            },
            "features.width.transform",
            "`width` holds only numbers",
        ),
        (
            {"features": {"height": {"transform": "zscore"}}},
            "model.type",
            "`model.type: image_classifier` needs exactly one feature with `transform: image`. Expected 1. Received none",
        ),
    ],
    ids=["image on height", "text on image", "text on width", "no image feature"],
)
def test_image_folder_spec_rules(tmp_path, spec_problems, overrides, path, message):
    write_class_folder(tmp_path / "images", "a", 2)
    write_class_folder(tmp_path / "images", "b", 2, seed=1)
    problems = spec_problems(_write_spec(tmp_path, {**IMAGE_SPEC, **overrides}))
    matching = [p for p in problems if p.path == path]
    assert matching and message in matching[0].message, [(p.path, p.message) for p in problems]


@pytest.mark.parametrize(
    ("overrides", "path", "message"),
    [
        (
            {"features.company": {"transform": "image", "image_size": [32, 32]}},
            "features.company.transform",
            "CSV cells hold text, not images",
        ),
        (
            {"features.fare": {"transform": "text", "sequence_length": 8}},
            "features.fare.transform",
            "transform `text` needs a text column, but `fare` holds only numbers",
        ),
        ({"model": {"type": "text_classifier"}}, "model.type", "exactly one feature with `transform: text`"),
        (
            {"features.company": {"transform": "text", "sequence_length": 8}, "model": {"type": "dnn"}},
            "model.type",
            "`model.type: dnn` reads table features only. Expected no `transform: image` or `text` feature. "
            "Received: `company` (`transform: text`). Use `model.type: text_classifier`",
        ),
    ],
    ids=["image on csv", "text on numbers", "text model without text", "table model over text"],
)
def test_csv_media_rules(make_spec, spec_problems, overrides, path, message):
    problems = spec_problems(make_spec(overrides))
    matching = [p for p in problems if p.path == path]
    assert matching and message in matching[0].message, [(p.path, p.message) for p in problems]


def test_two_text_features_for_a_text_classifier_are_an_error(make_spec, spec_problems, write_csv):
    write_csv(
        "taxi.csv",
        header=["fare", "tips", "title", "body"],
        rows=[["1", f"{i % 2}", f"a {i}", f"c {i}"] for i in range(6)],
    )
    text = {"transform": "text", "sequence_length": 8}
    problems = spec_problems(
        make_spec({"features": {"title": text, "body": text}, "model": {"type": "text_classifier"}})
    )
    assert [p.path for p in problems] == ["model.type"]
    assert "Received 2: `body`, `title`. Keep one of them" in problems[0].message


def test_text_feature_on_a_text_column_is_valid(make_spec):
    spec = make_spec(
        {"features.company": {"transform": "text", "sequence_length": 8}, "model": {"type": "text_classifier"}}
    )
    assert load_spec(str(spec)).data_format == "csv"


def test_cli_validate_reports_an_image_folder(tmp_path, repo_dir):
    truth = write_image_folder(tmp_path / "images")
    spec = _write_spec(tmp_path, IMAGE_SPEC)
    env = dict(os.environ, PYTHONPATH=repo_dir)
    result = subprocess.run(
        [sys.executable, "-m", "pipelines", "validate", str(spec)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "valid" in result.stdout and "image(s) in 2 classes" in result.stderr
    assert next(iter(truth.skipped)) in result.stderr and "Traceback" not in result.stderr
