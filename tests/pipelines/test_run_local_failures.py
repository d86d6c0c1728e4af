"""Runs that must stop: an invalid spec, and data that breaks the schema."""

from __future__ import annotations

import os

import pytest
from taxi_fixtures import run_cli, taxi_spec, write_spec


@pytest.mark.parametrize(
    "breakage, yaml_path, expected",
    [
        ("malformed", "data.path", "2 malformed row(s)"),
        ("empty", "data.path", "is empty"),
        ("no_label_column", "label.expression", "column `tips` used in the expression is not in the data"),
        ("missing", "data.path", "does not exist"),
    ],
)
def test_bad_data_exits_2_and_creates_nothing(tmp_path, taxi_sample_csv, breakage, yaml_path, expected):
    data = tmp_path / "data.csv"
    lines = open(taxi_sample_csv, encoding="utf-8").read().splitlines(keepends=True)[:50]
    if breakage == "malformed":
        lines[10] = "1,2,3\n"
        lines[20] = lines[20].rstrip("\n") + ",extra\n"
    elif breakage == "empty":
        lines = []
    elif breakage == "no_label_column":
        lines = [",".join(line.rstrip("\n").split(",")[:-1]) + "\n" for line in lines]
    if breakage != "missing":
        data.write_text("".join(lines), encoding="utf-8")
    root = tmp_path / "root"
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(str(data), str(root)))
    completed = run_cli(spec_file)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert expected in completed.stderr
    assert str(data) in completed.stderr
    assert "spec.yaml:" in completed.stderr and f": {yaml_path}: " in completed.stderr
    assert not root.exists()
    if breakage == "malformed":
        assert "line 11 has 3" in completed.stderr and "line 21 has 19" in completed.stderr


@pytest.mark.e2e
def test_anomalies_stop_the_run_before_transform_and_nothing_is_pushed(tmp_path, taxi_sample_csv):
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    header = open(taxi_sample_csv, encoding="utf-8").readline().strip().split(",")
    schema = schema_pb2.Schema()
    for column in header:
        feature = schema.feature.add(name=column)
        feature.type = schema_pb2.BYTES if column in ("payment_type", "company") else schema_pb2.FLOAT
    payment = next(f for f in schema.feature if f.name == "payment_type")
    payment.string_domain.name = "payment_type"
    payment.string_domain.value.append("Cash")
    schema_file = tmp_path / "schema.pbtxt"
    schema_file.write_text(text_format.MessageToString(schema), encoding="utf-8")

    root = tmp_path / "root"
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(root), schema=str(schema_file)))
    completed = run_cli(spec_file)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Run failed at DataGate" in completed.stderr
    assert "feature `payment_type`" in completed.stderr
    assert "] Transform" not in completed.stdout
    assert not os.path.exists(root / "serving")
