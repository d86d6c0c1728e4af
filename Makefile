# Two commands do everything on a fresh machine (both idempotent):
#   make run    set up, then run the bundled Chicago taxi pipeline end to end
#   make test   set up, then run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
export TF_USE_LEGACY_KERAS := 1
export TF_CPP_MIN_LOG_LEVEL := 3
export PYTHONWARNINGS := ignore::FutureWarning

.PHONY: setup run test test-fast lint bench clean

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

run: setup
	$(PY) pipelines/run_local.py

test: setup
	$(PY) -m pytest tests -q

test-fast: setup
	$(PY) -m pytest tests -q -m "not e2e"

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: setup
	$(PY) benchmarks/pipeline_vs_tfx.py

clean:
	rm -rf runs .pytest_cache
