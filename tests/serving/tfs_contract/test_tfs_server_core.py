"""Config reload, version labels and version swaps, translated from TF Serving's
`model_servers/server_core_test.cc`, `core/availability_preserving_policy_test.cc`
and the wire-visible cases of `core/aspired_versions_manager_test.cc`.

TF Serving's tests drive a ServerCore (or a manager) in process; here real
embedded servers are driven over gRPC (HandleReloadConfigRequest, Predict,
GetModelStatus) on TF Serving's own test models: half_plus_two (y = 0.5x + 2),
its two versions 123 and 124, half_plus_three (y = 0.5x + 3) and the model
that fails to load. Each test names the TF Serving TEST it translates.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import time
from pathlib import Path

import grpc
import pytest
import tensorflow as tf
from tensorflow_serving.apis import get_model_status_pb2, model_management_pb2, predict_pb2
from tfs_contract_helpers import BAD, HALF_PLUS_THREE, HALF_PLUS_TWO, TWO_VERSIONS, Stubs, start_server, tfs_testdata

from serving import config as cfg
from serving.errors import FailedPrecondition, InvalidArgument
from serving.protos import model_server_config_pb2
from serving.server import EmbeddedServer
from serving.server.app import ServerOptions

State = get_model_status_pb2.ModelVersionStatus.State
TENSORFLOW_MODEL_TYPE = model_server_config_pb2.ModelType.Value("TENSORFLOW")


def _reload_options(root: Path, **options) -> dict:
    """HandleReloadConfigRequest enabled for base paths under pytest's temporary folders and TF Serving's models."""
    roots = (str(root.parent), str(tfs_testdata()))  # root.parent: pytest's base folder, above every tmp_path
    return {"allow_config_reload": True, "allowed_model_roots": roots, **options}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("server_core")


@pytest.fixture(scope="module")
def strict(root):
    """A server as tensorflow_model_server by default: labels only on AVAILABLE versions."""
    server = start_server(
        root / "strict", cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO), **_reload_options(root)
    )
    stubs = Stubs(server.grpc_address)
    yield stubs
    stubs.close()
    server.stop()


@pytest.fixture(scope="module")
def lenient(root):
    """--allow_version_labels_for_unavailable_models."""
    server = start_server(
        root / "lenient",
        cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO),
        **_reload_options(root, allow_version_labels_for_unavailable_models=True),
    )
    stubs = Stubs(server.grpc_address)
    yield stubs
    stubs.close()
    server.stop()


def reload(stubs: Stubs, *models: cfg.ModelConfig, config: cfg.ModelServerConfig | None = None):
    """HandleReloadConfigRequest; returns the response (raises grpc.RpcError on an error status)."""
    request = model_management_pb2.ReloadConfigRequest()
    request.config.CopyFrom(config if config is not None else cfg.server_config(*models))
    return stubs.model.HandleReloadConfigRequest(request, timeout=60)


def reload_error(stubs: Stubs, *models: cfg.ModelConfig, config=None) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        reload(stubs, *models, config=config)
    return caught.value


def predict(stubs: Stubs, model: str, *, version: int | None = None, label: str | None = None) -> tuple[int, float]:
    """Predict x=2.0; returns (the version that answered, y)."""
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model
    if version is not None:
        request.model_spec.version.value = version
    if label is not None:
        request.model_spec.version_label = label
    request.inputs["x"].CopyFrom(tf.make_tensor_proto([2.0], dtype=tf.float32))
    response = stubs.prediction.Predict(request, timeout=30)
    return response.model_spec.version.value, float(tf.make_ndarray(response.outputs["y"])[0])


def predict_error(stubs: Stubs, model: str, **spec) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        predict(stubs, model, **spec)
    return caught.value


def states(stubs: Stubs, model: str) -> dict[int, str]:
    """GetModelStatus: version -> state name ({} when NOT_FOUND)."""
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = model
    try:
        response = stubs.model.GetModelStatus(request, timeout=30)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.NOT_FOUND, err.details()
        return {}
    return {s.version: State.Name(s.state) for s in response.model_version_status}


def wait_for_states(stubs: Stubs, model: str, expected: dict[int, str], timeout: float = 20.0) -> list[dict]:
    """Polls GetModelStatus until it answers `expected`; returns every answer seen on the way."""
    seen, deadline = [], time.monotonic() + timeout
    while True:
        seen.append(states(stubs, model))
        if seen[-1] == expected:
            return seen
        if time.monotonic() > deadline:
            pytest.fail(f"{model} never reached {expected}; last seen {seen[-1]}")
        time.sleep(0.05)


def add_version(base: Path, name: str, model: str = HALF_PLUS_TWO, folder: str = "00000123") -> None:
    """Copies a version folder of TF Serving's test models to `base/name` (writable; one rename)."""
    tmp = base / f".copying-{name}"
    shutil.copytree(tfs_testdata() / model / folder, tmp)
    for path, _, files in os.walk(tmp):
        os.chmod(path, stat.S_IRWXU)
        for file in files:
            os.chmod(Path(path) / file, stat.S_IRUSR | stat.S_IWUSR)
    os.rename(tmp, base / name)


def versions(root: Path, name: str, *folders: str, model: str = HALF_PLUS_TWO) -> Path:
    base = root / name
    base.mkdir(parents=True)
    for folder in folders:
        add_version(base, folder, model)
    return base


def two_versions(**kwargs) -> cfg.ModelConfig:
    """saved_model_half_plus_two_2_versions as model `two_versions`, both versions served."""
    return cfg.model_config("two_versions", tfs_testdata() / TWO_VERSIONS, policy=cfg.all_policy(), **kwargs)


def serve_two_versions(stubs: Stubs) -> None:
    """Serves `two_versions` alone, without labels, and waits until 123 and 124 are AVAILABLE."""
    reload(stubs, two_versions())
    wait_for_states(stubs, "two_versions", {123: "AVAILABLE", 124: "AVAILABLE"})


# -- start and reload -------------------------------------------------------------------------------------------


def test_start_returns_once_the_models_are_available(tmp_path):
    """CreateWaitsTillModelsAvailable: right after start, version 123 is AVAILABLE and answers."""
    server = start_server(tmp_path, cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO))
    stubs = Stubs(server.grpc_address)
    try:
        assert states(stubs, "half_plus_two") == {123: "AVAILABLE"}
        assert predict(stubs, "half_plus_two", version=123) == (123, 3.0)
    finally:
        stubs.close()
        server.stop()


def test_a_model_failing_at_start_is_reported_end_unlike_tf_serving(tmp_path):
    """ErroringModel: TF Serving's ServerCore::Create fails ("1 servable(s) did not become available") and
    tensorflow_model_server exits. Deliberate difference (README: the other models keep serving): the embedded
    server starts, reports the version END with its error and serves the other models."""
    server = start_server(
        tmp_path,
        cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO),
        cfg.model_config("bad", tfs_testdata() / BAD),
    )
    stubs = Stubs(server.grpc_address)
    try:
        assert states(stubs, "bad") == {123: "END"}
        assert predict(stubs, "half_plus_two") == (123, 3.0)
    finally:
        stubs.close()
        server.stop()


def test_reload_adds_unloads_and_adds_again_a_model(root):
    """ReloadConfigWaitsTillModelsAvailable, ReloadConfigUnloadsModels and
    ReloadConfigHandlesLoadingAPreviouslyUnloadedModel: a server started with no models; a reload returns once the
    new model answers; a reload to an empty list unloads it (GetModelStatus keeps answering END, as TF Serving's
    ServableStateMonitor); adding it again loads it again."""
    options = ServerOptions(rest_port=0, grpc_port=0, file_system_poll_wait_seconds=0.1, **_reload_options(root))
    server = EmbeddedServer(cfg.ModelServerConfig(), options).start()
    stubs = Stubs(server.grpc_address)
    half_plus_two = cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO)
    try:
        assert states(stubs, "half_plus_two") == {}
        assert reload(stubs, half_plus_two).status.error_code == 0
        assert predict(stubs, "half_plus_two") == (123, 3.0)  # no wait: ReloadConfig waited

        empty = cfg.ModelServerConfig()
        empty.model_config_list.SetInParent()
        assert reload(stubs, config=empty).status.error_code == 0
        assert states(stubs, "half_plus_two") == {123: "END"}
        assert predict_error(stubs, "half_plus_two").code() == grpc.StatusCode.NOT_FOUND

        reload(stubs, half_plus_two)
        assert predict(stubs, "half_plus_two") == (123, 3.0)
        assert states(stubs, "half_plus_two") == {123: "AVAILABLE"}
    finally:
        stubs.close()
        server.stop()


def test_reload_changing_the_base_path_swaps_versions_without_a_gap(lenient):
    """ReloadConfigChangeModelBasePath: one-version path (123) -> two-version path (latest: 124) -> back (123).
    The model keeps answering throughout (its loaded version is unloaded only after the other one loaded)."""
    one_version = cfg.model_config("moving", tfs_testdata() / HALF_PLUS_TWO)
    reload(lenient, one_version)
    reload(lenient, cfg.model_config("moving", tfs_testdata() / TWO_VERSIONS))
    seen = wait_for_states(lenient, "moving", {123: "END", 124: "AVAILABLE"})
    assert predict(lenient, "moving") == (124, 3.0)
    reload(lenient, one_version)
    seen += wait_for_states(lenient, "moving", {123: "AVAILABLE", 124: "END"})
    assert predict(lenient, "moving") == (123, 3.0)
    assert all("AVAILABLE" in answer.values() for answer in seen)


def test_reload_swaps_the_set_of_models(strict):
    """MultiplePlatformsWithConfigChange (one platform here): models 0 and 1, then 1 and 2; right after the reload
    returns, 0 is gone and 1 and 2 answer."""
    half_plus_two = tfs_testdata() / HALF_PLUS_TWO
    reload(strict, *(cfg.model_config(f"model_{i}", half_plus_two) for i in (0, 1)))
    assert [predict(strict, f"model_{i}") for i in (0, 1)] == [(123, 3.0)] * 2
    reload(strict, *(cfg.model_config(f"model_{i}", half_plus_two) for i in (1, 2)))
    error = predict_error(strict, "model_0")
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert "Servable not found for request: Latest(model_0)" in error.details()
    assert [predict(strict, f"model_{i}") for i in (1, 2)] == [(123, 3.0)] * 2


def test_reload_adding_a_model_that_fails_to_load_is_unknown(strict):
    """ServerCore::WaitUntilModelsAvailable: a new model that does not become available fails the reload with
    UNKNOWN "... model(s) did not become available"; the config is applied all the same."""
    error = reload_error(
        strict,
        cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO),
        cfg.model_config("bad", tfs_testdata() / BAD),
    )
    assert error.code() == grpc.StatusCode.UNKNOWN
    assert "1 model(s) did not become available: {{name: bad version: 123 due to error:" in error.details()
    assert "Session Bundle is deprecated and removed." in error.details()
    assert states(strict, "bad") == {123: "END"}
    assert predict(strict, "half_plus_two") == (123, 3.0)


def _with_model(mutate) -> cfg.ModelServerConfig:
    config = cfg.server_config(cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO))
    mutate(config)
    return config


def _custom(config):
    config.Clear()
    config.custom_model_config.SetInParent()


def _duplicate(config):
    config.model_config_list.config.append(config.model_config_list.config[0])


def _setter(field, value):
    return lambda config: setattr(config.model_config_list.config[0], field, value)


def _both(config):
    config.model_config_list.config[0].model_type = TENSORFLOW_MODEL_TYPE


def _other_type(config):
    config.model_config_list.config[0].model_platform = ""
    config.model_config_list.config[0].model_type = 2  # OTHER


def _relative(config):
    config.model_config_list.config.append(
        cfg.ModelConfig(name="rel", base_path="models/rel", model_platform="tensorflow")
    )


ONLY_MODEL_CONFIG_LIST = "ServerModelConfig type not supported by HandleReloadConfigRequest. Only ModelConfigList"
INVALID_CONFIGS = [
    ("IllegalReconfigurationToCustomConfig", _custom, ONLY_MODEL_CONFIG_LIST),
    ("empty_config", lambda config: config.Clear(), ONLY_MODEL_CONFIG_LIST),
    ("DuplicateModelNameInConfig", _duplicate, "Illegal to list model half_plus_two multiple times in config list"),
    (
        "UnknownModelPlatform",
        _setter("model_platform", "not_a_known_platform"),
        "Model half_plus_two requests unsupported platform not_a_known_platform",
    ),
    ("IllegalConfigModelTypeAndPlatformSet", _both, "Illegal setting both ModelServerConfig::model_type (deprecated)"),
    ("no_platform", _setter("model_platform", ""), "Illegal setting neither ModelServerConfig::model_type"),
    ("model_type_other", _other_type, "ModelServerConfig::model_type choice 2 not supported."),
    ("MixedAbsoluteRelativeFails", _relative, "Expected model rel to have an absolute path or URI; got base_path()="),
]


@pytest.mark.parametrize(("case", "mutate", "text"), INVALID_CONFIGS, ids=[row[0] for row in INVALID_CONFIGS])
def test_invalid_config_is_refused_and_the_served_config_kept(strict, case, mutate, text):
    """The ServerCore (and HandleReloadConfigRequest) checks: INVALID_ARGUMENT with TF Serving's words first."""
    reload(strict, cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO))
    error = reload_error(strict, config=_with_model(mutate))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith(text)
    assert predict(strict, "half_plus_two") == (123, 3.0)


def test_relative_base_path_is_refused_at_start(tmp_path):
    """RelativePathFails: ServerCore::Create refuses a relative base path (no model_config_list_root_dir flag)."""
    config = cfg.ModelServerConfig()
    config.model_config_list.config.add(name="rel", base_path="models/rel", model_platform="tensorflow")
    with pytest.raises(InvalidArgument, match=r"Expected model rel to have an absolute path or URI; got base_path\(\)"):
        EmbeddedServer(config, ServerOptions(rest_port=0, grpc_port=0))


def test_deprecated_model_type_is_served_as_tensorflow(strict):
    """DeprecatedModelTypeConfig: model_type TENSORFLOW without model_platform serves the model."""
    config = _with_model(_setter("model_platform", ""))
    config.model_config_list.config[0].model_type = TENSORFLOW_MODEL_TYPE
    assert reload(strict, config=config).status.error_code == 0
    assert predict(strict, "half_plus_two") == (123, 3.0)


# -- version labels ---------------------------------------------------------------------------------------------


def test_versions_and_labels_pick_the_servable(strict):
    """ModelSpecMultipleVersionsAvailable: latest is 124, version 123 is 123, labels A and B pick theirs (and can
    move between AVAILABLE versions); an unknown label is INVALID_ARGUMENT."""
    serve_two_versions(strict)
    assert predict(strict, "two_versions") == (124, 3.0)
    assert predict(strict, "two_versions", version=123) == (123, 3.0)
    reload(strict, two_versions(labels={"A": 123, "B": 124}))
    assert predict(strict, "two_versions", label="A") == (123, 3.0)
    assert predict(strict, "two_versions", label="B") == (124, 3.0)
    reload(strict, two_versions(labels={"A": 124, "B": 123}))
    assert predict(strict, "two_versions", label="A") == (124, 3.0)
    error = predict_error(strict, "two_versions", label="nonexistent label")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Unrecognized servable version label: nonexistent label" in error.details()


def test_label_on_an_unavailable_version_is_refused(strict):
    """AssignLabelToUnavailableVersion."""
    serve_two_versions(strict)
    error = reload_error(strict, two_versions(labels={"nice try": 999}))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error.details().startswith(
        "Request to assign label to version 999 of model two_versions, which is not currently available for inference"
    )
    assert predict_error(strict, "two_versions", label="nice try").code() == grpc.StatusCode.INVALID_ARGUMENT


def test_label_on_an_unavailable_version_is_allowed_with_the_flag(lenient):
    """AssignLabelToUnavailableVersionAllowed: the label is accepted; requests for it find no servable."""
    serve_two_versions(lenient)
    assert reload(lenient, two_versions(labels={"nice try": 999})).status.error_code == 0
    error = predict_error(lenient, "two_versions", label="nice try")
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert "Servable not found for request: Specific(two_versions, 999)" in error.details()


def test_moving_a_label_to_an_unavailable_version_is_refused_even_with_the_flag(lenient):
    """AssignExistingLabelToUnavailableVersionDisallowed: the flag covers new labels only; moving label A from 123 to
    an unavailable version fails (only force_allow_any_version_labels_for_unavailable_models would allow it)."""
    serve_two_versions(lenient)
    reload(lenient, two_versions(labels={"A": 123, "B": 124}))
    error = reload_error(lenient, two_versions(labels={"A": 999, "B": 124}))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "Request to assign label to version 999 of model two_versions" in error.details()
    assert predict(lenient, "two_versions", label="A") == (123, 3.0)


def test_moving_a_label_to_an_unavailable_version_is_allowed_with_force(tmp_path):
    """AssignExistingLabelToUnavailableVersionAllowed: with
    force_allow_any_version_labels_for_unavailable_models, a label may move to a version not loaded."""
    server = start_server(tmp_path, two_versions(), force_allow_any_version_labels_for_unavailable_models=True)
    try:
        server.manager.reload(cfg.server_config(two_versions(labels={"A": 123, "B": 124})))
        server.manager.reload(cfg.server_config(two_versions(labels={"A": 999, "B": 124})))
        assert dict(server.manager.config.model_config_list.config[0].version_labels) == {"A": 999, "B": 124}
    finally:
        server.stop()


def test_reapplying_a_label_whose_version_was_unloaded_is_refused(strict):
    """UpdateModelVersionLabelMap checks every label on every reload, unchanged ones too: once version 123 is
    unloaded, the same config with stable=123 is refused."""
    serve_two_versions(strict)
    reload(strict, two_versions(labels={"stable": 123}))
    only_124 = cfg.model_config(
        "two_versions", tfs_testdata() / TWO_VERSIONS, policy=cfg.specific_policy([124]), labels={"stable": 123}
    )
    reload(strict, only_124)  # 123 is still AVAILABLE while this is checked
    wait_for_states(strict, "two_versions", {123: "END", 124: "AVAILABLE"})
    error = predict_error(strict, "two_versions", label="stable")
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert "Servable not found for request: Specific(two_versions, 123)" in error.details()
    error = reload_error(strict, only_124)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "Request to assign label to version 123 of model two_versions" in error.details()


def test_labels_of_a_removed_model_are_forgotten(strict):
    """The label map is rebuilt from the new config: a removed model's label is unrecognized (INVALID_ARGUMENT,
    checked before the model), and GetModelStatus still answers its versions END."""
    serve_two_versions(strict)
    reload(strict, two_versions(labels={"stable": 123}))
    reload(strict, cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO))
    error = predict_error(strict, "two_versions", label="stable")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Unrecognized servable version label: stable" in error.details()
    assert states(strict, "two_versions") == {123: "END", 124: "END"}


# -- version swaps (AvailabilityPreservingPolicy, TF Serving's default) -----------------------------------------


def test_swap_loads_the_new_version_before_unloading_the_old(strict, tmp_path):
    """LoadsNewAspired, DoesNotUnloadWhenOtherNotReady, ServableHandleLatest: pushing version 2 under the latest
    policy loads 2 while 1 answers, then unloads 1; every request on the way is answered."""
    base = versions(tmp_path, "swap", "1")
    reload(strict, cfg.model_config("swap", base))
    add_version(base, "2", HALF_PLUS_THREE)
    answers, seen, deadline = [], [], time.monotonic() + 20
    while not seen or seen[-1] != {1: "END", 2: "AVAILABLE"}:
        assert time.monotonic() < deadline, f"no swap; last seen {seen[-1]}"
        answers.append(predict(strict, "swap"))
        seen.append(states(strict, "swap"))
    assert all("AVAILABLE" in answer.values() for answer in seen)
    assert set(answers) <= {(1, 3.0), (2, 4.0)}
    assert predict(strict, "swap") == (2, 4.0)


def test_a_failing_new_version_leaves_the_old_one_serving(strict, tmp_path):
    """DoesNotUnloadWhenOtherInError, AspireErrorDontUnload: version 2 fails to load (END with its error) and
    version 1 keeps answering."""
    base = versions(tmp_path, "failing", "1")
    reload(strict, cfg.model_config("failing", base))
    add_version(base, "2", BAD)
    wait_for_states(strict, "failing", {1: "AVAILABLE", 2: "END"})
    assert predict(strict, "failing") == (1, 3.0)
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = "failing"
    request.model_spec.version.value = 2
    [status] = strict.model.GetModelStatus(request, timeout=30).model_version_status
    assert status.status.error_code != 0
    assert "Session Bundle is deprecated and removed." in status.status.error_message


def test_a_failed_version_is_not_loaded_again_by_a_reload(strict, tmp_path, caplog):
    """AspiredVersionsManager::ProcessAspiredVersionsRequest (core/aspired_versions_manager.cc) re-adds a version
    in error only with `enable_reload_servables_with_error`, a ServerCore option tensorflow_model_server does not
    set: a reload that keeps the version aspired leaves it END, without another load."""
    base = versions(tmp_path, "stays_failed", "1")
    reload(strict, cfg.model_config("stays_failed", base))
    with caplog.at_level(logging.ERROR, logger="serving.server.lifecycle"):
        add_version(base, "2", BAD)
        wait_for_states(strict, "stays_failed", {1: "AVAILABLE", 2: "END"})
        failed_loads = caplog.text.count("Session Bundle is deprecated and removed.")
        reload(strict, cfg.model_config("stays_failed", base, labels={"stable": 1}))
        time.sleep(1.0)  # five polls
    assert caplog.text.count("Session Bundle is deprecated and removed.") == failed_loads
    assert states(strict, "stays_failed") == {1: "AVAILABLE", 2: "END"}
    assert predict(strict, "stays_failed", label="stable") == (1, 3.0)


def test_while_no_aspired_version_is_ready_the_newest_old_one_keeps_serving(strict, tmp_path):
    """UnloadIfNoAspiredVersionsReady: 1 and 2 are loaded, only the failing 3 is aspired; unloading 1 keeps
    availability, unloading 2 too would lose it, so 2 keeps serving."""
    base = versions(tmp_path, "fallback", "1", "2")
    reload(strict, cfg.model_config("fallback", base, policy=cfg.all_policy()))
    add_version(base, "3", BAD)
    reload(strict, cfg.model_config("fallback", base, policy=cfg.specific_policy([3])))
    wait_for_states(strict, "fallback", {1: "END", 2: "AVAILABLE", 3: "END"})
    assert predict(strict, "fallback") == (2, 3.0)


NO_SPECIFIC_VERSION = cfg.VersionPolicy()
NO_SPECIFIC_VERSION.specific.SetInParent()
POLICY_CHANGES = [
    ("AspiredRemovedPartial", cfg.all_policy(), cfg.specific_policy([0]), {0: "AVAILABLE", 1: "END"}),
    ("RevertToSmallerVersionNumber", cfg.latest_policy(1), cfg.specific_policy([0]), {0: "AVAILABLE", 1: "END"}),
    ("AspiredRemovedFull", cfg.all_policy(), NO_SPECIFIC_VERSION, {0: "END", 1: "END"}),
]


@pytest.mark.parametrize(("case", "before", "after", "expected"), POLICY_CHANGES, ids=[r[0] for r in POLICY_CHANGES])
def test_versions_no_longer_aspired_are_unloaded(strict, tmp_path, case, before, after, expected):
    """Versions 0 and 1 (0 is a version like any other: ServableHandleLatestVersionIsZero); after a policy change
    the versions left out are unloaded and requests for them are NOT_FOUND."""
    base = versions(tmp_path, case, "0", "1")
    reload(strict, cfg.model_config(case, base, policy=before))
    reload(strict, cfg.model_config(case, base, policy=after))
    wait_for_states(strict, case, expected)
    for version, state in expected.items():
        if state == "AVAILABLE":
            assert predict(strict, case) == (version, 3.0)
        else:
            error = predict_error(strict, case, version=version)
            assert error.code() == grpc.StatusCode.NOT_FOUND
            assert f"Servable not found for request: Specific({case}, {version})" in error.details()


@pytest.mark.parametrize(
    ("model", "version", "text"),
    [("missing", None, "Servable not found for request: Latest(missing)"), ("half_plus_two", 100, "Specific(")],
    ids=["ServableHandleNotFoundMissingLoaderName", "ServableHandleNotFoundMissingVersion"],
)
def test_unknown_model_or_version_is_not_found(strict, model, version, text):
    reload(strict, cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO))
    error = predict_error(strict, model, version=version)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert text in error.details()


# ServerCore::ReloadConfig calls UpdateModelVersionLabelMap before any model is added (server_core.cc), so at start
# every label points at a version that is not yet AVAILABLE: refused unless labels for unavailable models are allowed.
def test_labels_in_the_first_config_need_allow_version_labels_for_unavailable_models(root):
    model = cfg.model_config("half_plus_two", tfs_testdata() / HALF_PLUS_TWO, labels={"stable": 123})
    with pytest.raises(FailedPrecondition, match="Request to assign label to version 123 of model half_plus_two, "):
        start_server(root / "labels_strict", model, allow_version_labels_for_unavailable_models=False)
    server = start_server(root / "labels_lenient", model, allow_version_labels_for_unavailable_models=True)
    stubs = Stubs(server.grpc_address)
    try:
        assert predict(stubs, "half_plus_two", label="stable") == (123, 3.0)
    finally:
        stubs.close()
        server.stop()
