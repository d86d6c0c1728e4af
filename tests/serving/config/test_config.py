"""Config files built from the TensorFlow Serving protobufs, written atomically."""

from __future__ import annotations

import threading

import pytest
from google.protobuf import text_format

from serving import config as cfg
from serving.atomic import atomic_path, atomic_write_text
from serving.server.inference.batching_options import BatchingOptions


def _config() -> cfg.ModelServerConfig:
    return cfg.server_config(
        cfg.model_config(
            "penguins",
            "/models/penguins",
            policy=cfg.specific_policy([4, 3]),
            labels={cfg.STABLE_LABEL: 3, cfg.CANARY_LABEL: 4},
        ),
        cfg.model_config("taxi", "/models/taxi", policy=cfg.latest_policy(2)),
    )


def test_server_files_round_trip_through_the_protobufs(tmp_path):
    batching = cfg.batching_parameters(
        max_batch_size=16,
        batch_timeout_micros=500,
        num_batch_threads=2,
        max_enqueued_batches=8,
        allowed_batch_sizes=[4, 16],
    )
    files = cfg.write_server_files(tmp_path, _config(), batching=batching)
    assert cfg.read_text_proto(files.model_config, cfg.ModelServerConfig) == _config()
    assert cfg.read_text_proto(files.batching, cfg.BatchingParameters) == batching
    monitoring = cfg.read_text_proto(files.monitoring, cfg.MonitoringConfig)
    assert (monitoring.prometheus_config.enable, monitoring.prometheus_config.path) == (True, cfg.PROMETHEUS_PATH)


def test_max_execution_batch_size_turns_on_tf_servings_large_batch_splitting():
    params = cfg.batching_parameters(max_batch_size=256, max_execution_batch_size=32)
    assert (params.enable_large_batch_splitting.value, params.max_execution_batch_size.value) == (True, 32)
    options = BatchingOptions.from_proto(params)
    assert (options.max_batch_size, options.batch_rows) == (256, 32)
    assert not cfg.batching_parameters(max_batch_size=256).HasField("enable_large_batch_splitting")


def test_model_config_text_is_what_tensorflow_serving_reads(tmp_path):
    text = (cfg.write_server_files(tmp_path, _config()).model_config).read_text()
    assert 'model_platform: "tensorflow"' in text
    assert "specific {\n        versions: 3\n        versions: 4\n" in text
    assert 'key: "stable"\n      value: 3' in text
    parsed = text_format.Parse(text, cfg.ModelServerConfig())
    assert [m.name for m in parsed.model_config_list.config] == ["penguins", "taxi"]
    assert cfg.policy_kind(parsed.model_config_list.config[1].model_version_policy) == "latest"


def test_pin_versions_and_replace_model():
    model = cfg.find_model(_config(), "penguins")
    pinned = cfg.pin_versions(model, [4], {cfg.STABLE_LABEL: 4})
    updated = cfg.replace_model(_config(), pinned)
    assert list(cfg.find_model(updated, "penguins").model_version_policy.specific.versions) == [4]
    assert dict(cfg.find_model(updated, "penguins").version_labels) == {"stable": 4}
    assert cfg.find_model(updated, "taxi") == cfg.find_model(_config(), "taxi")


def test_readers_never_see_a_partial_config(tmp_path):
    path = tmp_path / "models.config"
    texts = [
        text_format.MessageToString(_config()),
        text_format.MessageToString(cfg.server_config(cfg.model_config("x" * 5000, "/m"))),
    ]
    atomic_write_text(path, texts[0])
    stop, seen, bad = threading.Event(), set(), []

    def read():
        while not stop.is_set():
            text = path.read_text()
            (seen.add(texts.index(text)) if text in texts else bad.append(len(text)))

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(300):
        atomic_write_text(path, texts[i % 2])
    stop.set()
    reader.join()
    assert bad == []
    assert seen == {0, 1}
    assert [p.name for p in tmp_path.iterdir()] == ["models.config"]


def test_atomic_path_leaves_no_temporary_file_on_error(tmp_path):
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "f.txt") as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer crashed")
    assert list(tmp_path.iterdir()) == []


BAD_VALUES = [
    ("latest 0", lambda: cfg.latest_policy(0), "num_versions=0"),
    ("no specific versions", lambda: cfg.specific_policy([]), "a non-empty list of version numbers"),
    ("model name with slash", lambda: cfg.model_config("a/b", "/m"), "without '/' or ':'"),
    (
        "duplicate models",
        lambda: cfg.server_config(cfg.model_config("a", "/m"), cfg.model_config("a", "/n")),
        "['a'] more than once",
    ),
    ("zero batch size", lambda: cfg.batching_parameters(max_batch_size=0), "max_batch_size=0"),
    ("negative timeout", lambda: cfg.batching_parameters(batch_timeout_micros=-1), "batch_timeout_micros=-1"),
    (
        "allowed sizes not ending at max",
        lambda: cfg.batching_parameters(max_batch_size=8, allowed_batch_sizes=[2, 4]),
        "ending with max_batch_size=8",
    ),
    (
        "execution batch larger than a request",
        lambda: cfg.batching_parameters(max_batch_size=8, max_execution_batch_size=16),
        "max_execution_batch_size=16",
    ),
    (
        "zero execution batch",
        lambda: cfg.batching_parameters(max_batch_size=8, max_execution_batch_size=0),
        "max_execution_batch_size=0",
    ),
    ("metrics path without slash", lambda: cfg.monitoring_config("metrics"), "starting with '/'"),
    (
        "label on unserved version",
        lambda: cfg.pin_versions(cfg.model_config("a", "/m"), [1], {"stable": 2}),
        "{'stable': 2}",
    ),
    ("unknown model", lambda: cfg.find_model(_config(), "pengiuns"), 'Did you mean "penguins"?'),
]


@pytest.mark.parametrize(("case", "build", "text"), BAD_VALUES, ids=[row[0] for row in BAD_VALUES])
def test_bad_config_values_are_rejected_with_a_fix(case, build, text):
    with pytest.raises(cfg.ConfigError) as caught:
        build()
    assert text in str(caught.value)
    assert "Expected" in str(caught.value) and "Received:" in str(caught.value)


def test_unreadable_config_files_name_the_problem(tmp_path):
    with pytest.raises(cfg.ConfigError, match="does not exist"):
        cfg.read_text_proto(tmp_path / "missing.config", cfg.ModelServerConfig)
    (tmp_path / "bad.config").write_text("model_config_list { config { nme: 'x' } }")
    with pytest.raises(cfg.ConfigError, match=r"Invalid protobuf file: .*bad.config.*nme"):
        cfg.read_text_proto(tmp_path / "bad.config", cfg.ModelServerConfig)


def test_model_config_writes_relative_base_paths_absolute(tmp_path, monkeypatch):
    """TF Serving refuses a relative base_path (server_core.cc); configs we write never hold one."""
    monkeypatch.chdir(tmp_path)
    assert cfg.model_config("m", "models/m").base_path == str(tmp_path / "models" / "m")
    assert cfg.model_config("m", "gs://bucket/models/m").base_path == "gs://bucket/models/m"
