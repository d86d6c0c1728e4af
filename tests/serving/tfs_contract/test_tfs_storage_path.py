"""Which version folders are served, translated from TF Serving's
`sources/storage_path/file_system_storage_path_source_test.cc`.

TF Serving's test calls its source's poll by hand and checks the aspired
versions it emits; here a real embedded server polls (every 0.1 s) version
folders copied from TF Serving's own test models, and the tests assert what a
client sees: GetModelStatus over REST and predictions. Version folders hold
half_plus_two (y = 0.5x + 2) unless a test needs to tell versions apart, then
half_plus_three (y = 0.5x + 3). Each test serves its own model names through
an in-process config reload, so one server serves the whole module.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from google.protobuf import text_format
from serving_helpers import http
from tfs_contract_helpers import HALF_PLUS_THREE, HALF_PLUS_TWO, start_server, tfs_testdata

from serving import config as cfg

MANAGER_LOG = "serving.server.lifecycle.manager"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("storage_cfg"), file_system_poll_wait_seconds=0.1)
    yield server
    server.stop()


def add_version(base: Path, name: str, model: str = HALF_PLUS_TWO) -> Path:
    """Copies one of TF Serving's test models into `base/name` (writable, renamed in one step)."""
    tmp = base / f".copying-{name}"
    shutil.copytree(tfs_testdata() / model / "00000123", tmp)
    for folder, _, files in os.walk(tmp):
        os.chmod(folder, stat.S_IRWXU)
        for file in files:
            os.chmod(Path(folder) / file, stat.S_IRUSR | stat.S_IWUSR)
    os.rename(tmp, base / name)
    return base / name


def model_dir(root: Path, *names: str) -> Path:
    """A base path holding version folders `names` (and an empty `non_numerical_child`, as TF Serving's test)."""
    base = root / "models"
    (base / "non_numerical_child").mkdir(parents=True)
    for name in names:
        add_version(base, name)
    return base


def states(server, name: str) -> dict[int, str] | None:
    """Version -> state from GET /v1/models/<name>; None while TF Serving answers 404 (no versions yet)."""
    status, body = http(server.rest_url, "GET", f"/v1/models/{name}")
    if status == 404:
        return None
    assert status == 200, body
    return {int(s["version"]): s["state"] for s in body["model_version_status"]}


def available(server, name: str) -> set[int]:
    return {v for v, state in (states(server, name) or {}).items() if state == "AVAILABLE"}


def wait_until(condition, what: str, timeout: float = 15.0):
    """Polls `condition` until it returns a truthy value; fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"Timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def predict(server, name: str, x: float = 2.0) -> tuple[int, dict]:
    return http(server.rest_url, "POST", f"/v1/models/{name}:predict", {"instances": [x]})


def serve(server, *models: cfg.ModelConfig) -> None:
    """HandleReloadConfigRequest, in process: the server now serves exactly `models`."""
    server.reload_config(cfg.server_config(*models))


def policy_proto(text: str) -> cfg.VersionPolicy:
    """A model_version_policy written as in a models.config file ("" is the default policy)."""
    return text_format.Parse(text, cfg.VersionPolicy())


# (TF Serving TEST, version folders, model_version_policy, versions TF Serving aspires)
POLICIES = [
    ("MultipleVersions", ["42", "17"], "", {42}),
    ("MultipleVersionsAtTheSameTime", ["42", "17"], "all {}", {17, 42}),
    ("NLatestVersions", ["42", "33", "30", "21", "17"], "latest { num_versions: 3 }", {42, 33, 30}),
    ("SpecificVersions", ["42", "33", "30", "21", "17"], "specific { versions: 17 versions: 30 }", {17, 30}),
    ("SpecificVersionsLeadingZeros", ["42", "30", "00017"], "specific { versions: 17 versions: 30 }", {17, 30}),
    ("DefaultVersionPolicy", ["42", "33", "30"], "", {42}),
    ("DefaultNumLatestVersions", ["42", "33", "30"], "latest {}", {42}),
    ("ParseTimestampedVersion", ["20170111173521"], "all {}", {20170111173521}),
    ("DuplicateVersions", ["0001", "001", "00001"], "", {1}),
]


@pytest.mark.parametrize(("case", "folders", "policy", "expected"), POLICIES, ids=[row[0] for row in POLICIES])
def test_version_policy_serves_the_versions_tf_serving_aspires(server, tmp_path, case, folders, policy, expected):
    name = f"policy_{case}"
    serve(server, cfg.model_config(name, model_dir(tmp_path, *folders), policy=policy_proto(policy)))
    wait_until(lambda: available(server, name) == expected, f"{name} to serve {sorted(expected)}")
    assert set(states(server, name)) == expected  # nothing else was even tried
    assert predict(server, name) == (200, {"predictions": [3.0]})


def test_specific_policy_without_versions_serves_nothing(server, tmp_path, caplog):
    """SpecificVersionsEmpty: TF Serving aspires no version, and warns."""
    base = model_dir(tmp_path, "42", "17")
    with caplog.at_level(logging.WARNING, logger=MANAGER_LOG):
        serve(server, cfg.model_config("specific_empty", base, policy=policy_proto("specific {}")))
        time.sleep(0.3)  # three polls: nothing may appear
    assert "No specific versions requested for servable specific_empty." in caplog.text
    assert states(server, "specific_empty") is None
    status, body = predict(server, "specific_empty")
    assert status == 404
    assert "Servable not found for request: Latest(specific_empty)" in body["error"]


def test_missing_specific_version_is_logged_with_tf_serving_words(server, tmp_path, caplog):
    """AspireSpecificVersions logs each requested version that is not on disk; the others are served."""
    base = model_dir(tmp_path, "17")
    with caplog.at_level(logging.WARNING, logger=MANAGER_LOG):
        serve(server, cfg.model_config("specific_missing", base, policy=cfg.specific_policy([17, 99])))
        wait_until(lambda: available(server, "specific_missing") == {17}, "version 17")
    assert (
        "Version 99 of servable specific_missing, which was requested to be served as a 'specific' version in the "
        "servable's version policy, was not found in the file system" in caplog.text
    )


@pytest.mark.parametrize("base_path_exists", [False, True], ids=["no_base_path", "base_path_without_versions"])
def test_no_versions_at_startup_then_files_appear(server, tmp_path, caplog, base_path_exists):
    """NoVersionsAtStartup (fail_if_zero_versions_at_startup false, as ServerCore sets it) and FilesAppearAfterStartup.

    Nothing is served and GetModelStatus is NOT_FOUND until a version folder appears; then it is loaded.
    """
    base = tmp_path / "later"
    name = f"later_{'empty' if base_path_exists else 'missing'}"
    if base_path_exists:
        (base / "non_numerical_child").mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger=MANAGER_LOG):
        serve(server, cfg.model_config(name, base))
        wait_until(lambda: str(base) in caplog.text, "the poller to report the base path")
    expected_log = (
        f"No versions of servable {name} found under base path {base}. Did you forget to name your leaf directory "
        "as a number (eg. '/1/')?"
        if base_path_exists
        else f"Could not find base path {base} for servable {name}"
    )
    assert expected_log in caplog.text
    status, body = http(server.rest_url, "GET", f"/v1/models/{name}")
    assert status == 404
    assert f"Could not find any versions of model {name}" in body["error"]
    assert predict(server, name)[0] == 404

    base.mkdir(exist_ok=True)
    add_version(base, "3")
    wait_until(lambda: available(server, name) == {3}, "version 3 to appear")
    assert predict(server, name) == (200, {"predictions": [3.0]})


NOT_VERSIONS = [(".42", "hidden"), ("42.denied", "suffix"), ("4a", "not_a_number"), ("9" * 20, "over_int64")]


@pytest.mark.parametrize(("name", "case"), NOT_VERSIONS, ids=[case for _, case in NOT_VERSIONS])
def test_folders_that_are_not_int64_numbers_are_not_versions(server, tmp_path, name, case):
    """SimpleAtoi into an int64 refuses these names, so TF Serving ignores such folders too."""
    base = model_dir(tmp_path, "3")
    add_version(base, name, HALF_PLUS_THREE)
    model = f"not_version_{case}"
    serve(server, cfg.model_config(model, base, policy=cfg.all_policy()))
    wait_until(lambda: available(server, model) == {3}, "version 3")
    time.sleep(0.25)  # a few more polls: the other folder must stay ignored
    assert states(server, model) == {3: "AVAILABLE"}


# absl::SimpleAtoi, which TF Serving's `ParseVersionNumber` calls (file_system_storage_path_source.cc), takes
# ASCII whitespace around the number and a sign: these are versions 7, 7, 7 and -7, loaded from their own folder.
SIGNED = [("+7", 7, "plus_sign"), (" 7", 7, "leading_space"), ("7\t", 7, "trailing_tab"), ("-7", -7, "negative")]


@pytest.mark.parametrize(("name", "version", "case"), SIGNED, ids=[case for *_, case in SIGNED])
def test_signed_and_spaced_folder_names_are_versions_as_tf_serving_reads_them(server, tmp_path, name, version, case):
    base = model_dir(tmp_path, "3")
    add_version(base, name, HALF_PLUS_THREE)
    model = f"signed_{case}"
    serve(server, cfg.model_config(model, base, policy=cfg.all_policy()))
    wait_until(lambda: available(server, model) == {3, version}, f"version {version} from {name!r}")
    status, body = http(server.rest_url, "POST", f"/v1/models/{model}/versions/3:predict", {"instances": [2.0]})
    assert (status, body) == (200, {"predictions": [3.0]})  # half_plus_two
    # Version -7 has no REST URL (TF Serving's path regex takes digits); latest is the larger number.
    status, body = predict(server, model)
    assert (status, body) == (200, {"predictions": [4.0 if version == 7 else 3.0]})


def test_a_file_named_like_a_version_is_a_version_that_fails_to_load(server, tmp_path):
    """TF Serving lists the base path's children with GetChildren and aspires every name SimpleAtoi reads, files
    included; loading a file fails in `LoadSessionBundleOrSavedModelBundle` (session_bundle/oss/
    session_bundle_util.cc) with NOT_FOUND "Specified file path does not appear to contain a SavedModel bundle".
    An empty folder is still not a version (README: a copy in progress is not a broken model)."""
    base = model_dir(tmp_path, "3")
    (base / "9").write_text("not a model")
    (base / "8").mkdir()  # a copy that has not started yet
    serve(server, cfg.model_config("file_version", base, policy=cfg.all_policy()))
    wait_until(lambda: states(server, "file_version") == {3: "AVAILABLE", 9: "END"}, "version 3, and 9 failed")
    _, body = http(server.rest_url, "GET", "/v1/models/file_version")
    failed = next(s for s in body["model_version_status"] if s["version"] == "9")
    assert failed["status"]["error_code"] == "NOT_FOUND"
    assert failed["status"]["error_message"].startswith(
        "Specified file path does not appear to contain a SavedModel bundle (should have a file called "
        f"`saved_model.pb`)\nSpecified file path: {base / '9'}"
    )


def test_multiple_models_each_serve_their_own_versions(server, tmp_path):
    """MultipleServables: servable_0 has 1 and 3, servable_1 has 42, servable_2 has none."""
    serve(
        server,
        cfg.model_config("servable_0", model_dir(tmp_path / "0", "1", "3")),
        cfg.model_config("servable_1", model_dir(tmp_path / "1", "42")),
        cfg.model_config("servable_2", model_dir(tmp_path / "2")),
    )
    wait_until(lambda: available(server, "servable_0") == {3}, "servable_0 version 3")
    wait_until(lambda: available(server, "servable_1") == {42}, "servable_1 version 42")
    assert states(server, "servable_0") == {3: "AVAILABLE"}
    assert states(server, "servable_2") is None


def test_changing_the_set_of_models_keeps_the_model_in_both(server, tmp_path):
    """ChangeSetOfServables: servable_0 is unloaded, servable_2 loaded, and servable_1 (in both configs) never sees
    an empty aspired-versions list, so it stays AVAILABLE throughout."""
    bases = {i: model_dir(tmp_path / str(i), "0") for i in range(3)}
    serve(server, *(cfg.model_config(f"set_{i}", bases[i]) for i in (0, 1)))
    for i in (0, 1):
        wait_until(lambda i=i: available(server, f"set_{i}") == {0}, f"set_{i} version 0")

    serve(server, *(cfg.model_config(f"set_{i}", bases[i]) for i in (1, 2)))
    seen_by_kept_model = set()

    def swapped() -> bool:
        seen_by_kept_model.add(states(server, "set_1")[0])
        return states(server, "set_0") == {0: "END"} and available(server, "set_2") == {0}

    wait_until(swapped, "set_0 to end and set_2 to load")
    assert seen_by_kept_model == {"AVAILABLE"}
    assert predict(server, "set_1") == (200, {"predictions": [3.0]})
    assert predict(server, "set_0")[0] == 404


def test_changing_the_version_policy_swaps_the_versions(server, tmp_path):
    """ChangeVersionPolicy: latest 2 of 1, 02, 3, 5, 8, 13 serves 13 and 8; then specific 2 and 5 serves those
    (2 from the folder `02`)."""
    base = model_dir(tmp_path, "1", "02", "3", "5", "8", "13")
    serve(server, cfg.model_config("policy_change", base, policy=cfg.latest_policy(2)))
    wait_until(lambda: available(server, "policy_change") == {8, 13}, "versions 8 and 13")
    serve(server, cfg.model_config("policy_change", base, policy=cfg.specific_policy([2, 5])))
    wait_until(
        lambda: states(server, "policy_change") == {2: "AVAILABLE", 5: "AVAILABLE", 8: "END", 13: "END"},
        "versions 2 and 5 to replace 8 and 13",
    )


def test_renamed_and_deleted_version_folders_are_unloaded(server, tmp_path):
    """ServableVersionDirRenamed: with the `all` policy, renaming 2 and 5 away and deleting 8 leaves 1 and 3."""
    base = model_dir(tmp_path, "1", "2", "3", "5", "8")
    serve(server, cfg.model_config("renamed", base, policy=cfg.all_policy()))
    wait_until(lambda: available(server, "renamed") == {1, 2, 3, 5, 8}, "all five versions")
    os.rename(base / "2", base / "2.denied")
    os.rename(base / "5", base / "5.denied")
    shutil.rmtree(base / "8")
    wait_until(
        lambda: states(server, "renamed") == {1: "AVAILABLE", 2: "END", 3: "AVAILABLE", 5: "END", 8: "END"},
        "2, 5 and 8 to be unloaded",
    )


def test_deleting_the_last_version_unloads_it(server, tmp_path):
    """LastVersionNotRemoved with servable_versions_always_present false (tensorflow_model_server has no flag for
    true): an empty folder means no aspired versions, so version 42 is unloaded."""
    base = model_dir(tmp_path, "42")
    serve(server, cfg.model_config("last_version", base))
    wait_until(lambda: available(server, "last_version") == {42}, "version 42")
    shutil.rmtree(base / "42")
    wait_until(lambda: states(server, "last_version") == {42: "END"}, "version 42 to end")
    status, body = predict(server, "last_version")
    assert status == 404
    assert "Servable not found for request: Latest(last_version)" in body["error"]


def test_base_path_that_disappears_keeps_the_loaded_version(server, tmp_path, caplog):
    """PollFileSystemForServable: a missing base path is an error and no aspired-versions update (TF Serving
    guards against "a non-existent (or transiently unavailable) base-path"), so version 5 keeps serving."""
    base = model_dir(tmp_path, "5")
    serve(server, cfg.model_config("vanishing", base))
    wait_until(lambda: available(server, "vanishing") == {5}, "version 5")
    with caplog.at_level(logging.ERROR, logger=MANAGER_LOG):
        os.rename(base, tmp_path / "moved")
        wait_until(lambda: "Could not find base path" in caplog.text, "the missing base path to be logged")
    assert f"Could not find base path {base} for servable vanishing" in caplog.text
    assert states(server, "vanishing") == {5: "AVAILABLE"}
    assert predict(server, "vanishing") == (200, {"predictions": [3.0]})
    os.rename(tmp_path / "moved", base)
    add_version(base, "6", HALF_PLUS_THREE)
    wait_until(lambda: states(server, "vanishing") == {5: "END", 6: "AVAILABLE"}, "version 6 once the path is back")
    assert predict(server, "vanishing") == (200, {"predictions": [4.0]})


def test_a_missing_base_path_stops_the_poll_for_every_model(server, tmp_path, caplog):
    """PollFileSystemForConfig (file_system_storage_path_source.cc) returns the first servable's error
    (TF_RETURN_IF_ERROR), so no aspired-versions update reaches any model: `steady` gets its new version 6
    only once `vanishing` has its base path back."""
    gone = model_dir(tmp_path / "gone", "5")
    steady = model_dir(tmp_path / "steady", "5")
    serve(server, cfg.model_config("gone", gone), cfg.model_config("steady", steady))
    wait_until(lambda: available(server, "gone") == {5} and available(server, "steady") == {5}, "both at 5")
    with caplog.at_level(logging.ERROR, logger=MANAGER_LOG):
        os.rename(gone, tmp_path / "moved")
        wait_until(lambda: f"Could not find base path {gone}" in caplog.text, "the missing base path to be logged")
    add_version(steady, "6", HALF_PLUS_THREE)
    time.sleep(0.5)  # five polls
    assert states(server, "steady") == {5: "AVAILABLE"}
    assert predict(server, "gone") == (200, {"predictions": [3.0]})  # loaded versions keep serving
    os.rename(tmp_path / "moved", gone)
    wait_until(lambda: states(server, "steady") == {5: "END", 6: "AVAILABLE"}, "version 6 once the other path is back")


def test_poll_wait_zero_polls_only_once(tmp_path):
    """PollFilesystemOnlyOnce: with file_system_poll_wait_seconds 0 the file system is read once, at start."""
    base = model_dir(tmp_path, "3")
    one_shot = start_server(tmp_path / "cfg", cfg.model_config("one_shot", base), file_system_poll_wait_seconds=0)
    try:
        assert states(one_shot, "one_shot") == {3: "AVAILABLE"}
        add_version(base, "4")
        time.sleep(0.5)
        assert states(one_shot, "one_shot") == {3: "AVAILABLE"}
    finally:
        one_shot.stop()
