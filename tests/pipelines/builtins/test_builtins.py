"""Contract: the built-in table (`pipelines.builtins`) is what the compiler builds, wires and orders."""

from __future__ import annotations

import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.api import compile as compile_pipeline
from pipelines.builtins import BUILTINS, BY_ID, COMPONENT_ORDER, DATA_GATE, builtin_nodes, control_edges
from pipelines.graph import Ref
from pipelines.load import load_spec

VARIANTS = {
    "default": {},
    "materialized": {"transform": {"materialize": True}},
    "deploy": {"deploy": {"enabled": True}},
    "warm_predict": {"training": {"warm_start": True}, "predict": {"enabled": True}},
    "module_files": {
        "transform": {"module_file": "tfx_module.py"},
        "training": {"module_file": "tfx_module.py", "custom_config": {"epochs": 2, "note": "as TFX passes it"}},
    },
    "tuning": {"tuning": {"max_trials": 2, "search_space": {"dropout": {"min": 0.0, "max": 0.5}}}},
    "tuning_module_file": {
        "transform": {"module_file": "tfx_module.py"},
        "training": {"module_file": "tfx_module.py"},
        "tuning": {},
    },
}
# A TFX module file for the `module_files` variant (validate reads it; compiling does not run it).
TFX_MODULE = (
    "def preprocessing_fn(inputs):\n    return dict(inputs)\n\n\ndef run_fn(fn_args):\n    pass\n\n\n"
    "def tuner_fn(fn_args):\n    pass\n"
)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, taxi_sample_csv):
    """variant -> (resolved spec, {component id: TFX component}), each compiled once."""
    result = {}
    for name, sections in VARIANTS.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "tfx_module.py").write_text(TFX_MODULE, encoding="utf-8")
        spec = taxi_spec(taxi_sample_csv, str(folder / "root"), **sections)
        resolved = load_spec(write_spec(folder / "spec.yaml", spec))
        result[name] = resolved, {c.id: c for c in compile_pipeline(resolved).components}
    return result


def _wired(component) -> dict[str, Ref]:
    return {
        name: Ref(channel.producer_component_id, channel.output_key)
        for name, channel in component.inputs.items()
        if getattr(channel, "producer_component_id", None)
    }


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_factory_wires_what_its_record_says(compiled, variant):
    resolved, components = compiled[variant]
    nodes = builtin_nodes(resolved.spec)
    assert list(components) == list(nodes)  # the same nodes, in the table's order
    for node_id, component in components.items():
        if node_id not in ("BaselineResolver", "AnalyzerCacheResolver"):  # their inputs are wrapped by the resolver
            assert _wired(component) == nodes[node_id].wiring, node_id
        outputs = {name: channel.type.TYPE_NAME for name, channel in component.outputs.items()}
        assert outputs == nodes[node_id].outputs, node_id
        for name, channel in component.inputs.items():
            port = BY_ID[node_id].inputs.get(name)
            if port is not None:
                assert channel.type.TYPE_NAME == port.type_name, (node_id, name)


def test_module_files_go_to_tfx_transform_and_trainer_unchanged_with_custom_config(compiled):
    import json

    from components.evaluator.eval_config import EvaluationRequest

    resolved, components = compiled["module_files"]
    module_file = resolved.training_module_file
    transform, trainer = components["Transform"].exec_properties, components["Trainer"].exec_properties
    assert transform["module_file"] == module_file and not transform.get("preprocessing_fn")
    assert transform["custom_config"] in (None, "null")  # a TFX preprocessing_fn(inputs) takes no config
    assert trainer["module_file"] == module_file and not trainer.get("run_fn")
    assert json.loads(trainer["custom_config"]) == {"epochs": 2, "note": "as TFX passes it"}
    assert json.loads(trainer["train_args"])["num_steps"] == resolved.spec.training.train_steps
    request = EvaluationRequest.from_flags(components["Evaluator"].executor_spec.extra_flags)
    assert request.user_model and request.label_key == resolved.spec.label.name
    # The generated transform's Trainer keeps its own run_fn and config.
    default = compiled["default"][1]["Trainer"].exec_properties
    assert default["run_fn"] == "components.trainer.run_fn.run_fn" and not default.get("module_file")
    assert "module_file" not in json.loads(default["custom_config"])["training"]


def test_the_deployer_is_in_the_pipeline_only_with_deploy_enabled(compiled):
    assert "Deployer" not in compiled["default"][1]
    # Every built-in but the previous span's statistics (only a spec with spans and drift has it), the warm
    # start's resolver, the analyzer cache's (only a spec with a window of spans), the BulkInferrer and the Tuner
    # (only a spec with `tuning:`).
    optional = {"PreviousSpanResolver", "WarmStartResolver", "AnalyzerCacheResolver", "BulkInferrer", "Tuner"}
    assert list(compiled["deploy"][1]) == [node for node in COMPONENT_ORDER if node not in optional]


def test_warm_start_and_predict_add_their_nodes_only_when_enabled(compiled):
    import json

    default, components = compiled["default"][1], compiled["warm_predict"][1]
    assert "WarmStartResolver" not in default and "BulkInferrer" not in default
    assert "base_model" not in _wired(default["Trainer"])
    # `warm_start: false` stays out of the Trainer's config: runs keep their cache key.
    assert "warm_start" not in json.loads(default["Trainer"].exec_properties["custom_config"])["training"]
    trainer = components["Trainer"]
    assert _wired(trainer)["base_model"] == Ref("WarmStartResolver", "model")
    assert json.loads(trainer.exec_properties["custom_config"])["training"]["warm_start"] is True
    for component in (default["Trainer"], trainer):  # `warm_start_steps: null` too: the cache keys stay
        assert "warm_start_steps" not in json.loads(component.exec_properties["custom_config"])["training"]
    from tfx.dsl.components.common.resolver import RESOLVER_STRATEGY_CLASS

    from components.resolver.baseline import LatestBlessedBaselineStrategy

    resolver = components["WarmStartResolver"]
    for node_id in ("WarmStartResolver", "BaselineResolver"):  # one strategy for both
        assert components[node_id].exec_properties[RESOLVER_STRATEGY_CLASS] is LatestBlessedBaselineStrategy
    assert not resolver.upstream_nodes  # no candidate: it runs before the Trainer
    inferrer = components["BulkInferrer"]
    assert _wired(inferrer) == {
        "examples": Ref("ExampleGen", "examples"),
        "model": Ref("Trainer", "model"),
        "model_blessing": Ref("Evaluator", "blessing"),
    }
    assert "Pusher" in {node.id for node in inferrer.upstream_nodes}
    assert json.loads(inferrer.exec_properties["model_spec"]) == {"model_signature_name": ["serving_default"]}
    assert inferrer.executor_spec.executor_class.__module__ == "components.bulk_inferrer.executor"


def test_tuning_adds_the_tuner_whose_best_values_feed_the_trainer(compiled):
    import json

    assert "Tuner" not in compiled["default"][1]
    resolved, components = compiled["tuning"]
    tuner, trainer = components["Tuner"], components["Trainer"]
    assert tuner.exec_properties["tuner_fn"] == "components.tuner.tuner_fn.tuner_fn"
    config = json.loads(tuner.exec_properties["custom_config"])
    assert config["tuning"]["search_space"] == {
        "dropout": {"min": 0.0, "max": 0.5, "step": None, "sampling": "linear", "choices": None}
    }
    # The same model and data as the Trainer's own run_fn config, which the tuning section leaves unchanged.
    assert {k: v for k, v in config.items() if k != "tuning"} == json.loads(trainer.exec_properties["custom_config"])
    assert json.loads(tuner.exec_properties["train_args"])["num_steps"] == resolved.spec.training.train_steps
    assert _wired(trainer)["hyperparameters"] == Ref("Tuner", "best_hyperparameters")
    assert _wired(tuner)["examples"] == _wired(trainer)["examples"]
    # A TFX module file: TFX's Tuner runs its own tuner_fn, as the Trainer runs its run_fn.
    module_tuner = compiled["tuning_module_file"][1]["Tuner"].exec_properties
    assert module_tuner["module_file"] == compiled["tuning_module_file"][0].training_module_file
    assert not module_tuner.get("tuner_fn")


def test_spans_with_drift_and_a_window_add_the_previous_span_resolver_and_read_a_window(tmp_path, taxi_sample_csv):
    import shutil

    for span in (1, 2):
        (tmp_path / "data" / f"span-{span}").mkdir(parents=True)
        shutil.copy(taxi_sample_csv, tmp_path / "data" / f"span-{span}" / "trips.csv")
    spec = taxi_spec("data/span-{SPAN}/*.csv", str(tmp_path / "root"))
    spec["data"]["window"] = 2
    spec["data"].setdefault("checks", {})["drift"] = 0.3
    resolved = load_spec(write_spec(tmp_path / "spec.yaml", spec))
    components = {c.id: c for c in compile_pipeline(resolved).components}
    nodes = builtin_nodes(resolved.spec)
    assert list(components) == list(nodes)
    assert list(components)[:4] == ["ExampleGen", "AnalyzerCacheResolver", "StatisticsGen", "PreviousSpanResolver"]
    assert {node.id for node in components["PreviousSpanResolver"].upstream_nodes} == {"StatisticsGen"}
    assert _wired(components["DataGate"])["previous_statistics"] == Ref("PreviousSpanResolver", "statistics")
    assert components["DataGate"].exec_properties["drift"] == 0.0  # drift is between spans, not eval vs train
    for node_id in ("Transform", "Trainer"):  # a window over every run's ExampleGen outputs, after ExampleGen
        assert "examples" not in _wired(components[node_id]), node_id
        assert "ExampleGen" in {node.id for node in components[node_id].upstream_nodes}, node_id
    # The window's spans but the newest were analyzed by the last run: Transform reads that run's analyzer cache.
    from tfx.dsl.components.common.resolver import RESOLVER_STRATEGY_CLASS

    from components.resolver.analyzer_cache import EarlierWindowCacheStrategy

    transform, resolver = components["Transform"], components["AnalyzerCacheResolver"]
    assert _wired(transform)["analyzer_cache"] == Ref("AnalyzerCacheResolver", "cache")
    assert transform.outputs["updated_analyzer_cache"].type.TYPE_NAME == "TransformCache"
    assert resolver.exec_properties[RESOLVER_STRATEGY_CLASS] is EarlierWindowCacheStrategy
    every_run, examples = resolver.raw_inputs["cache"], resolver.raw_inputs["examples"]
    assert (every_run.producer_component_id, every_run.output_key) == ("Transform", "updated_analyzer_cache")
    assert examples is components["ExampleGen"].outputs["examples"]  # this run's span
    assert {node.id for node in resolver.upstream_nodes} == {"ExampleGen"}


def test_without_a_window_transform_keeps_no_analyzer_cache(compiled):
    transform = compiled["default"][1]["Transform"]
    assert "updated_analyzer_cache" not in transform.outputs and "analyzer_cache" not in _wired(transform)
    assert "AnalyzerCacheResolver" not in compiled["default"][1]


def test_control_edges_are_the_upstream_nodes_the_compiler_adds(compiled):
    resolved, components = compiled["default"]
    edges = control_edges(resolved.spec)
    nodes = builtin_nodes(resolved.spec)
    assert edges == {"Transform": frozenset({DATA_GATE})}
    for node_id, component in components.items():
        data_producers = {ref.step for ref in nodes[node_id].wiring.values()}
        extra = {node.id for node in component.upstream_nodes} - data_producers
        assert extra == set(edges.get(node_id, ())), node_id


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_builtin_reads_only_outputs_of_builtins_before_it(compiled, variant):
    spec = compiled[variant][0].spec
    assert len(COMPONENT_ORDER) == len(BUILTINS) == len(set(COMPONENT_ORDER))
    for builtin in BUILTINS:
        for ref in builtin.wiring(spec).values():
            step, output = ref.split(".")
            assert COMPONENT_ORDER.index(step) < COMPONENT_ORDER.index(builtin.id), (builtin.id, ref)
            assert output in BY_ID[step].node(spec).outputs, (builtin.id, ref)


def test_reading_the_table_imports_no_tfx():
    code = "import sys, pipelines.builtins, pipelines.steps.listing; print(sorted(m for m in ('tfx', 'tensorflow') if m in sys.modules))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


def test_the_architecture_pages_worked_example_is_the_statistics_gen_record():
    """docs/architecture.md shows a record as the code holds it (the `BUILTIN = Builtin(...)` block)."""
    import os

    page = open(os.path.join(REPO, "docs/architecture.md"), encoding="utf-8").read()
    source = open(os.path.join(REPO, "pipelines/builtins/statistics_gen.py"), encoding="utf-8").read()
    example = page.split("(`pipelines/builtins/statistics_gen.py`):\n\n```python\n", 1)[1].split("```", 1)[0]
    assert example.strip() and example.strip() in source
