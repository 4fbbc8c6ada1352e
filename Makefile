# The two commands of the README: `make demo` and `make test`. Both need only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint typecheck unit bench lock clean

# The checkout's venv: the runtime set and the test tools (requirements-dev.lock, a superset of
# requirements.lock, which is what production installs: docs/operations.md). The first install
# takes a minute or two: it says so, and pip names each package as it comes.
$(STAMP): requirements.lock requirements-dev.lock pyproject.toml
	@echo "make: installing recon and its locked dependencies into $(VENV) (the first time only; a minute or two)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)
	@echo "make: installed into $(VENV)"

install: $(STAMP)

## Runs the main job on embedded defaults: the sandbox in-process and SQLite.
demo: install
	$(BIN)/recon demo

## The suite runs on every core (pytest-xdist), a test file to a worker so that a module's shared
## fixture is built once (docs/decisions.md, "The suite"); `make test PYTEST_ARGS=` runs it in one
## process.
PYTEST_ARGS ?= -n auto --dist loadfile

## The whole suite: lint, format check, type check, tests.
test: install lint typecheck
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## The shell scripts are checked by shellcheck (Debian: apt-get install shellcheck). Without it,
## lint says so on every run and skips them, so that `make test` keeps needing only python3 and
## make; RECON_REQUIRE_SHELLCHECK=1 (CI: .ci/run) turns the skip into a failure.
SHELL_SCRIPTS := .ci/run $(wildcard cron/*.sh docs/screenshots/*.sh)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@if command -v shellcheck >/dev/null 2>&1; then \
		echo "shellcheck $(SHELL_SCRIPTS)"; shellcheck $(SHELL_SCRIPTS); \
	elif [ -n "$$RECON_REQUIRE_SHELLCHECK" ]; then \
		echo "lint: FAILED: shellcheck is not installed and RECON_REQUIRE_SHELLCHECK is set" \
			"(apt-get install shellcheck)" >&2; exit 1; \
	else \
		echo "lint: SKIPPED shellcheck of $(SHELL_SCRIPTS): shellcheck is not installed" \
			"(apt-get install shellcheck); CI requires it" >&2; \
	fi

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

## The scale benchmarks also run on this PostgreSQL server when it answers, in a database of their own
## that they create and drop (the URL's database is only the way in). Empty: SQLite only.
RECON_BENCH_POSTGRES_URL ?= $(or $(RECON_TEST_POSTGRES_URL),postgresql+psycopg://postgres@127.0.0.1:5432/test)

bench: install
	RECON_BENCH_POSTGRES_URL='$(RECON_BENCH_POSTGRES_URL)' $(BIN)/python bench/run.py

## Re-pin every dependency (needs network access to the package index): requirements-dev.lock,
## the runtime set and the test tools, then requirements.lock, the runtime set production installs,
## started from the dev lock so that its pins are the same. pip-tools goes in a venv of its own.
lock:
	test -x .lock-venv/bin/pip-compile || ($(PYTHON) -m venv .lock-venv && \
		.lock-venv/bin/python -m pip install --quiet pip-tools)
	.lock-venv/bin/pip-compile --quiet --generate-hashes --allow-unsafe --extra dev --strip-extras \
		-o requirements-dev.lock pyproject.toml
	cp requirements-dev.lock requirements.lock
	.lock-venv/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
		-o requirements.lock pyproject.toml

clean:
	rm -rf $(VENV) .lock-venv .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist
