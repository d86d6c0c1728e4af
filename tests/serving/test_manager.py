"""Version policies, file-system polling, load failures and label rules."""

from __future__ import annotations

import pytest
from serving_helpers import MODEL, push

from serving import config as cfg
from serving.errors import FailedPrecondition
from serving.server.manager import ModelManager, State


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
    manager._load = lambda *args: (loads.append(args[-1]), original(*args))
    for _ in range(5):
        manager.poll_once()
    [status] = manager.status(MODEL, version=3)
    assert status.state_name == "END"
    assert "Failed to load servable version 3 of model lin" in status.error.text
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
