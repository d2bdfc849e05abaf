# schedbench: `make run` serves the site with a Celery worker; `make test` runs the whole suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
PYTEST_WORKERS ?= 2

.PHONY: run test lint migrate demo static worker clean compile plotly-bundle

$(BIN)/python:
	@echo "packages   creating .venv (first start only)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-run: requirements.txt | $(BIN)/python
	@echo "packages   installing requirements.txt into .venv (when it changed; a minute or so)"
	@$(BIN)/pip install --quiet -r requirements.txt
	@touch $@

$(VENV)/.installed-test: requirements.txt requirements-dev.txt requirements-compile.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.installed-run $(VENV)/.installed-compile

# mypy (mypyc) for the compiled simulator; a machine that cannot install it runs pure Python
$(VENV)/.installed-compile: requirements-compile.txt | $(BIN)/python
	-$(BIN)/pip install --quiet -r requirements-compile.txt
	touch $@

migrate: $(VENV)/.installed-run
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	@$(BIN)/python manage.py load_demo

# Hashed, gzipped copies under the data dir (what pages link when DEBUG=0); redone only when a
# static source or the pinned packages changed.
DATA_DIR := $(or $(SCHEDBENCH_DATA_DIR),var)
STATIC_SOURCES := $(shell find static benchmarks simulations discussions regressions traces bisection -path '*static/*' -type f 2>/dev/null)
static: $(DATA_DIR)/staticfiles/staticfiles.json

$(DATA_DIR)/staticfiles/staticfiles.json: $(STATIC_SOURCES) $(VENV)/.installed-run
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0

# Plotly.js with only the trace types the portal draws (jsbuild/plotly-portal.js), built from the
# npm packages pinned in package-lock.json; the output is committed, so only a change of trace
# types or of the Plotly.js version needs Node and this target.
plotly-bundle:
	npm ci --no-audit --no-fund --ignore-scripts
	npm run build:plotly

# The simulator's hot modules compiled where the machine can (simulations about ten times
# faster); without a C compiler it says so and the simulator runs as pure Python, with identical
# results.  Redone when a simulator source changes; `make run NO_COMPILE=1` skips it.
SIMULATOR_SOURCES := $(wildcard simulator/*.py simulator/policies/*.py)
simulator/_compiled.manifest: $(SIMULATOR_SOURCES) | $(VENV)/.installed-compile
	$(BIN)/python -m simulator.build --if-possible --progress

# schedtrace's hot modules the same way (trace parsing several times faster; same results
# without): the worker, which ingests traces, builds them first. `make clean` removes them.
SCHEDTRACE_SOURCES := $(wildcard schedtrace/*.py)
schedtrace/_compiled.manifest: $(SCHEDTRACE_SOURCES) | $(VENV)/.installed-compile
	$(BIN)/python -m schedtrace.build --if-possible

# The web server and one worker on the embedded filesystem broker; Ctrl-C stops both. One line per
# phase, the URL last (portal/devrun.py): the site serves once the database and the demo are
# ready, while the simulator compiles in the background and the worker moves to the compiled build
# when it is done. Static files need no collecting here: with DEBUG on they are served from the
# sources (`make static` is for DEBUG=0).
run: $(VENV)/.installed-run
	@$(BIN)/python -m portal.devrun --port $(PORT) $(if $(NO_COMPILE),--no-compile)

# One more worker next to `make run`: on the embedded broker they share var/broker/ safely (message
# files are written and claimed atomically, portal/fsbroker.py); across hosts use Redis.
worker: $(VENV)/.installed-run schedtrace/_compiled.manifest
	$(BIN)/celery -A portal worker --loglevel=INFO

# mypy checks the pure libraries (simulator, schedtrace, benchmarks/parsers): see mypy.ini
lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy --config-file mypy.ini
	$(BIN)/python manage.py makemigrations --check --dry-run

test: lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# Optional: compile the simulator's hot modules with mypyc (needs a C compiler).  Everything works
# without it; `python -m simulator.build --clean` (or `make clean`) goes back to pure Python.
compile: $(VENV)/.installed-compile
	$(BIN)/python -m simulator.build
	$(BIN)/python -m schedtrace.build

clean:
	rm -rf var/ .pytest_cache .ruff_cache .mypy_cache
	rm -f simulator/*.so simulator/policies/*.so simulator/_compiled.manifest
	rm -f schedtrace/*.so schedtrace/_compiled.manifest
