"""Installs the framework's packages: pipelines, components, serving, compat.

Exact dependency versions are pinned in requirements.lock (see the README);
`make setup` installs from it. The ranges below say what the code needs.
"""

from setuptools import find_packages, setup

setup(
    name="yaml-tfx",
    version="0.1.0",
    description="Declarative TFX pipelines: one YAML file from raw data to TensorFlow Serving.",
    python_requires=">=3.10,<3.11",
    packages=find_packages(include=["pipelines*", "components*", "serving*", "compat*"]),
    package_data={"pipelines": ["examples/*.yaml", "report/templates/*.j2", "ui/templates/*.html"]},
    install_requires=[
        "tfx==1.16.0",
        "dill",
        "pyyaml>=6",
        "aiohttp>=3.9",
        "uvloop>=0.19",  # the model server's event loop (libuv): ~25% more requests/s than asyncio's
        "prometheus-client>=0.17",
        "croniter>=2",
        "jinja2>=3",  # the run report and the UI
        "matplotlib>=3.8",  # the run report's charts (inline SVG)
        "tabulate",  # `runs` tables
        "pyarrow",  # ExampleGen's fast CSV path
        "google-crc32c",  # its TFRecord framing
        "kubeflow-training==1.7.0",  # the multi-worker Trainer's TFJob (works with TFX's kubernetes<27)
        "kubernetes",  # manifests built from the client's models (the version TFX pins)
        "tenacity",  # component retries with backoff
        "sqlalchemy>=2,<3",  # `data.sql`: queries through SQLAlchemy
        "psycopg2-binary",  # its PostgreSQL driver
        "fastavro",  # `data.format: avro`
        "grpcio-health-checking>=1.48.2",  # the model server's grpc.health.v1 service (1.48: protobuf 3.20)
    ],
    extras_require={
        "dev": ["pytest", "ruff"],
        # `compile --target kubeflow`: the PipelineJob protos TFX's KubeflowV2DagRunner writes.
        "kubeflow": ["kfp-pipeline-spec>=0.2.2,<0.3", "kfp-server-api>=2.1"],
        # Running the generated DAG; Airflow 2.x needs Werkzeug<3, so `make test` gives it
        # its own .venv-airflow (docs/orchestrators.md).
        "airflow": ["apache-airflow>=2.9,<3"],
        # `orchestrator.beam: {runner: dask}`: Beam's DaskRunner on a dask.distributed cluster.
        "dask": ["dask>=2024.4.2", "distributed>=2024.4.2"],
    },
)
