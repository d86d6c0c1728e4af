# Two commands do everything on a fresh machine (both idempotent):
#   make run    set up, then run the bundled Chicago taxi pipeline end to end
#   make test   set up, then run the test suite
VENV ?= .venv
VENV_AIRFLOW ?= .venv-airflow
VENV_KFP ?= .venv-kfp
PY := $(VENV)/bin/python
# pytest-xdist workers for `make test`: the suite keeps about one CPU busy (much of it waits on servers and
# subprocesses), so two workers on a 2-CPU machine take ~half the time. Each test module stays on one worker
# (--dist loadfile: module fixtures run once). TEST_WORKERS=0 runs it in this process, one test at a time.
TEST_WORKERS ?= 2
export TF_USE_LEGACY_KERAS := 1
export TF_CPP_MIN_LOG_LEVEL := 3
export PYTHONWARNINGS := ignore::FutureWarning

.PHONY: setup extras system-packages run test test-fast lint bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock setup.py
	@python310=$$(scripts/find_python310.sh) || exit 1; \
	if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; assert sys.version_info[:2] == (3, 10)' 2>/dev/null; then \
		echo "Creating $(VENV) with $$python310"; rm -rf $(VENV); $$python310 -m venv $(VENV) || exit 1; \
	fi
	@echo "Installing the pinned dependency set (requirements.lock; about 4 minutes the first time)..."
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

# Optional engines the tests use (docs/orchestrators.md), idempotent like setup:
# requirements-extras.lock goes into $(VENV) under -c requirements.lock (no pin changes);
# Airflow 2 needs Werkzeug<3, so it gets $(VENV_AIRFLOW), with $(VENV)'s packages behind its own.
# The kfp 2 SDK and aiplatform 2 need protobuf 4+ (TFX pins 3.20): $(VENV_KFP), on its own.
extras: $(VENV)/.extras-installed $(VENV_AIRFLOW)/.installed $(VENV_KFP)/.installed system-packages

# Debian packages the browser, compose and Pushgateway tests drive (root + apt-get; else a note and they skip).
system-packages:
	@scripts/install_system_packages.sh

$(VENV)/.extras-installed: $(VENV)/.installed requirements-extras.lock
	$(PY) -m pip install --quiet --disable-pip-version-check -c requirements.lock -r requirements-extras.lock
	@touch $@

$(VENV_AIRFLOW)/.installed: $(VENV)/.extras-installed requirements-airflow.lock
	@python310=$$(scripts/find_python310.sh) || exit 1; rm -rf $(VENV_AIRFLOW); $$python310 -m venv $(VENV_AIRFLOW) || exit 1
	@echo "Installing Airflow into $(VENV_AIRFLOW) (requirements-airflow.lock; about a minute)..."
	$(VENV_AIRFLOW)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-airflow.lock
	@site=$$($(VENV_AIRFLOW)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	base=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	echo "import site; site.addsitedir('$$base')" > $$site/zz_tfx_venv.pth
	$(VENV_AIRFLOW)/bin/python -c 'import airflow, tfx, pipelines.targets.airflow'
	@touch $@

$(VENV_KFP)/.installed: requirements-kfp.lock
	@python310=$$(scripts/find_python310.sh) || exit 1; rm -rf $(VENV_KFP); $$python310 -m venv $(VENV_KFP) || exit 1
	@echo "Installing the kfp 2 / Vertex AI SDKs into $(VENV_KFP) (requirements-kfp.lock; about 30 seconds)..."
	$(VENV_KFP)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-kfp.lock
	$(VENV_KFP)/bin/python -c 'import kfp, kfp.kubernetes, kfp_server_api, google.cloud.aiplatform'
	@touch $@

run: setup
	$(PY) pipelines/run_local.py

test: setup extras
	$(PY) -m pytest tests -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=40

test-fast: setup
	$(PY) -m pytest tests -q -m "not e2e" -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: setup
	$(PY) benchmarks/pipeline_vs_tfx.py

clean:
	rm -rf runs .pytest_cache
