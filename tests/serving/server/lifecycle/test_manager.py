"""Version policies, file-system polling, load failures and label rules."""

from __future__ import annotations

import logging
import os
import shutil

import pytest
from serving_helpers import MODEL, push

from serving import config as cfg
from serving.errors import FailedPrecondition
from serving.server.lifecycle.manager import ModelManager
from serving.server.lifecycle.versions import State


@pytest.fixture
def three_versions(tmp_path, exports):
    base = tmp_path / "models" / MODEL
    base.mkdir(parents=True)
    for version in (1, 2, 3):
        push(base, version, exports[version])
    (base / ".tmp-9").mkdir()  # a push in progress
    (base / "notes").mkdir()  # not a version
    (base / "7").mkdir()  # numeric but no saved_model.pb yet
    return base


def _manager(base, policy=None, labels=None, **kwargs) -> ModelManager:
    config = cfg.server_config(cfg.model_config(MODEL, base, policy=policy, labels=labels))
    return ModelManager(config, poll_seconds=0, **kwargs)


@pytest.mark.parametrize(
    ("policy", "served"),
    [
        (None, [3]),
        (cfg.latest_policy(2), [2, 3]),
        (cfg.all_policy(), [1, 2, 3]),
        (cfg.specific_policy([1, 3, 8]), [1, 3]),
    ],
    ids=["default latest 1", "latest 2", "all", "specific"],
)
def test_version_policy_picks_versions_on_disk(three_versions, policy, served):
    manager = _manager(three_versions, policy)
    manager.poll_once()
    statuses = manager.status(MODEL)
    assert sorted(s.version for s in statuses if s.state == State.AVAILABLE) == served
    assert all(s.version in (1, 2, 3) for s in statuses)  # .tmp-9, notes and 7 ignored


def test_reload_moves_versions_and_unloads_the_rest(three_versions):
    manager = _manager(three_versions, cfg.specific_policy([1]))
    manager.poll_once()
    manager.reload(cfg.server_config(cfg.model_config(MODEL, three_versions, policy=cfg.specific_policy([2]))))
    manager.poll_once()
    assert {s.version: s.state_name for s in manager.status(MODEL)} == {1: "END", 2: "AVAILABLE"}


def test_broken_version_is_reported_and_retried_a_bounded_number_of_times(three_versions):
    (three_versions / "3" / "saved_model.pb").write_bytes(b"garbage")
    manager = _manager(three_versions, cfg.latest_policy(1), max_load_retries=2)
    loads = []
    original = manager._load
    manager._load = lambda *args: (loads.append(args[3]), original(*args))  # (model, config, path, version)
    for _ in range(5):
        manager.poll_once()
    [status] = manager.status(MODEL, version=3)
    assert status.state_name == "END"
    # TF Serving's loader status: `ReadBinaryProto`'s DATA_LOSS "Can't parse ... as binary proto".
    assert status.error.code_name == "DATA_LOSS"
    assert status.error.text.startswith(f"Can't parse {three_versions / '3' / 'saved_model.pb'} as binary proto")
    assert "(version 3 of model lin," in status.error.text
    assert loads == [3, 3, 3]  # first attempt + 2 retries


def test_old_version_keeps_serving_while_the_new_one_fails(three_versions):
    manager = _manager(three_versions, cfg.specific_policy([2]))
    manager.poll_once()
    (three_versions / "3" / "saved_model.pb").write_bytes(b"garbage")
    manager.reload(cfg.server_config(cfg.model_config(MODEL, three_versions, policy=cfg.specific_policy([3]))))
    manager.poll_once()
    with manager.handle(MODEL) as servable:
        assert servable.version == 2


def test_labels_must_point_at_available_versions(three_versions):
    manager = _manager(three_versions, cfg.specific_policy([1]), labels={"stable": 2})
    with pytest.raises(FailedPrecondition, match="assign label to version 2 of model lin"):
        manager.start()
    manager.stop()
    lenient = _manager(
        three_versions, cfg.specific_policy([1]), labels={"stable": 2}, allow_labels_for_unavailable=True
    )
    lenient.start()
    lenient.stop()


def test_wait_for_times_out_with_the_last_state(three_versions):
    manager = _manager(three_versions, cfg.specific_policy([1]))
    manager.poll_once()
    with pytest.raises(TimeoutError, match="did not reach AVAILABLE"):
        manager.wait_for(MODEL, 2, State.AVAILABLE, timeout=0.1)


def test_a_symlink_loop_next_to_a_version_is_skipped_with_one_warning(tmp_path, exports, caplog):
    base = tmp_path / "models" / MODEL
    base.mkdir(parents=True)
    push(base, 1, exports[1])
    os.symlink("5", base / "5")  # a loop named like a version
    os.symlink("loop", base / "loop")
    manager = _manager(base)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            manager.poll_once()
        assert [s.version for s in manager.status(MODEL) if s.state == State.AVAILABLE] == [1]
        push(base, 2, exports[2])  # a later version still loads
        for _ in range(3):
            manager.poll_once()
    assert {s.version: s.state_name for s in manager.status(MODEL)} == {1: "END", 2: "AVAILABLE"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"Skipping {base / '5'} under the model's base path: Too many levels of symbolic links"]
    assert not [r for r in caplog.records if r.exc_info]


def test_a_version_copied_in_slowly_is_served_once_complete(tmp_path, exports):
    # saved_model.pb first (a version folder from then on), the variables later: the loads fail until
    # max_load_retries is spent, then the version is tried again whenever its folder changes.
    base = tmp_path / "models" / MODEL
    base.mkdir(parents=True)
    push(base, 1, exports[1])
    manager = _manager(base, max_load_retries=2)
    manager.poll_once()
    target = base / "2"
    target.mkdir()
    shutil.copy2(exports[2] / "saved_model.pb", target / "saved_model.pb")
    for _ in range(5):
        manager.poll_once()
    assert manager.status(MODEL, version=2)[0].state_name == "END"
    (target / "variables").mkdir()
    for step, source in enumerate(sorted((exports[2] / "variables").iterdir())):
        shutil.copy2(source, target / "variables" / source.name)
        os.utime(target / "variables" / source.name, ns=(step + 1, step + 1))  # each step is a change
        for _ in range(3):
            manager.poll_once()
    for extra in sorted(p for p in exports[2].iterdir() if p.name not in ("saved_model.pb", "variables")):
        (shutil.copytree if extra.is_dir() else shutil.copy2)(extra, target / extra.name)
    for _ in range(3):
        manager.poll_once()
    assert {s.version: s.state_name for s in manager.status(MODEL)} == {1: "END", 2: "AVAILABLE"}
    with manager.handle(MODEL) as servable:
        assert servable.version == 2
