"""The atomic push: whole versions or nothing, and no duplicate versions."""

from __future__ import annotations

import os
import shutil

import pytest

from components.pusher.executor import model_fingerprint, push_atomically


@pytest.fixture
def model_dir(tmp_path):
    model = tmp_path / "model"
    (model / "variables").mkdir(parents=True)
    (model / "saved_model.pb").write_bytes(b"graph-v1")
    (model / "variables" / "variables.data-00000-of-00001").write_bytes(b"\x00" * 1024)
    return str(model)


def test_push_writes_a_numbered_version_with_the_whole_model(model_dir, tmp_path):
    base = str(tmp_path / "serving" / "taxi")
    version, pushed = push_atomically(model_dir, base)
    assert pushed and version.isdigit()
    target = os.path.join(base, version)
    assert open(os.path.join(target, "saved_model.pb"), "rb").read() == b"graph-v1"
    assert os.path.getsize(os.path.join(target, "variables", "variables.data-00000-of-00001")) == 1024
    assert sorted(os.listdir(base)) == [version]


def test_pushing_the_same_model_again_adds_no_version(model_dir, tmp_path):
    base = str(tmp_path / "serving" / "taxi")
    first, _ = push_atomically(model_dir, base)
    second, pushed = push_atomically(model_dir, base)
    assert (second, pushed) == (first, False)
    assert os.listdir(base) == [first]


def test_a_changed_model_gets_a_higher_version(model_dir, tmp_path):
    base = str(tmp_path / "serving" / "taxi")
    first, _ = push_atomically(model_dir, base)
    with open(os.path.join(model_dir, "saved_model.pb"), "wb") as handle:
        handle.write(b"graph-v2")
    second, pushed = push_atomically(model_dir, base)
    assert pushed and int(second) > int(first)


def test_a_copy_that_fails_midway_leaves_no_visible_version(model_dir, tmp_path, monkeypatch):
    base = str(tmp_path / "serving" / "taxi")
    real_copy = shutil.copy2
    calls = {"n": 0}

    def failing_copy(src, dst, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real_copy(src, dst, **kwargs)

    monkeypatch.setattr(shutil.copytree, "__defaults__", (False, None, failing_copy, False, False))
    with pytest.raises(OSError, match="disk full"):
        push_atomically(model_dir, base)
    assert os.listdir(base) == []  # neither a version nor a staging folder


def test_fingerprint_ignores_assets_extra(model_dir):
    before = model_fingerprint(model_dir)
    os.makedirs(os.path.join(model_dir, "assets.extra"))
    with open(os.path.join(model_dir, "assets.extra", "tf_serving_warmup_requests"), "wb") as handle:
        handle.write(b"warmup")
    assert model_fingerprint(model_dir) == before
