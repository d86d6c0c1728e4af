# GPU training image: the Trainer (and the whole pipeline) on NVIDIA GPUs.
#
#   docker build -f docker/trainer-gpu.Dockerfile -t pipelines-trainer-gpu .
#   docker run --gpus all pipelines-trainer-gpu python -m pipelines doctor
#   docker run --gpus all -v $PWD/runs:/app/runs pipelines-trainer-gpu python -m pipelines run
#
# Several workers: one container per worker, each with its TF_CONFIG, running
#   python -m components.trainer.worker fn_args.json
#
# The base image's TensorFlow (CUDA and cuDNN included) must be the version
# pinned in requirements.lock: tests/components/trainer/test_dockerfile.py checks it.
FROM tensorflow/tensorflow:2.16.2-gpu

ENV TF_USE_LEGACY_KERAS=1 \
    TF_CPP_MIN_LOG_LEVEL=2 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# TFX 1.16 supports Python 3.9-3.10 and requirements.lock is resolved for 3.10;
# the image's own Python may be newer, so the project gets a 3.10 virtualenv.
# Its TensorFlow wheel (the same pinned version) uses the image's CUDA and cuDNN.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3.10 python3.10-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3.10 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lock file changes.
COPY requirements.lock ./
RUN python -m pip install -r requirements.lock

# The project is plain packages on PYTHONPATH (pyproject.toml declares no installable [project]).
COPY pyproject.toml ./
COPY pipelines ./pipelines
COPY components ./components
COPY serving ./serving
COPY compat ./compat
ENV PYTHONPATH=/app
RUN python -c "import sys; assert sys.version_info[:2] == (3, 10); import pipelines.cli, components.trainer.run_fn"

CMD ["python", "-m", "pipelines", "doctor"]
