"""Runs `run_fn` in a fresh process, optionally over N logical CPU devices (tests only).

    python trainer_process.py FN_ARGS.json [FN_ARGS.json ...] [--logical-cpus N]

Each FnArgs file (written by `components.trainer.worker.save_fn_args`) is
trained in turn, in this one process. Logical devices must be configured
before TensorFlow initialises its devices, and MultiWorkerMirroredStrategy
must be created before TensorFlow runs anything, which is why distribution
tests run this in a subprocess.
"""

from __future__ import annotations

import argparse
import sys

from components import ensure_legacy_keras  # noqa: F401 - Keras 2 before TensorFlow loads


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("fn_args", nargs="+")
    parser.add_argument("--logical-cpus", type=int, default=0)
    args = parser.parse_args()
    if args.logical_cpus > 1:
        import tensorflow as tf

        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * args.logical_cpus)
    from components.trainer import worker

    for path in args.fn_args:
        worker.main([path])
    return 0


if __name__ == "__main__":
    sys.exit(main())
