"""Submits a package with the real `kfp.Client` (kfp 2 SDK), as a user would; run with `.venv-kfp/bin/python`.

kfp_client_submit.py HOST PACKAGE MODE     MODE: run | upload | schedule CRON
"""

from __future__ import annotations

import sys
import warnings

warnings.simplefilter("ignore")


def main(host: str, package: str, mode: str, *rest: str) -> None:
    import kfp

    client = kfp.Client(host=host)
    if mode == "run":
        client.create_run_from_pipeline_package(package, arguments={}, experiment_name="Default")
    elif mode == "upload":
        client.upload_pipeline(package, pipeline_name="chicago-taxi")
    elif mode == "schedule":
        experiment = client.create_experiment("Default")
        client.create_recurring_run(
            experiment.experiment_id, "chicago-taxi-schedule", cron_expression=rest[0], pipeline_package_path=package
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
