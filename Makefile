# schedbench: `make run` serves the site with a Celery worker; `make test` runs the whole suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
PYTEST_WORKERS ?= 2

.PHONY: run test lint migrate demo static worker clean compile

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-run: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-test: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.installed-run

migrate: $(VENV)/.installed-run
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py load_demo

# Hashed, gzipped copies under the data dir (what pages link when DEBUG=0); redone only when a
# static source or the pinned packages (Plotly.js comes from one) changed.
DATA_DIR := $(or $(SCHEDBENCH_DATA_DIR),var)
STATIC_SOURCES := $(shell find static benchmarks -path '*static/*' -type f 2>/dev/null)
static: $(DATA_DIR)/staticfiles/staticfiles.json

$(DATA_DIR)/staticfiles/staticfiles.json: $(STATIC_SOURCES) $(VENV)/.installed-run
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0

# The web server and one worker on the embedded filesystem broker; Ctrl-C stops both.
run: demo static
	@echo "schedbench on http://127.0.0.1:$(PORT)/ (Ctrl-C stops the server and the worker)"
	@trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	$(BIN)/celery -A portal worker --concurrency=1 --loglevel=WARNING & worker=$$!; \
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

worker: $(VENV)/.installed-run
	$(BIN)/celery -A portal worker --loglevel=INFO

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/python manage.py makemigrations --check --dry-run

test: lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# Optional: compile the simulator's hot modules with mypyc (needs a C compiler).  Everything works
# without it; `python -m simulator.build --clean` (or `make clean`) goes back to pure Python.
compile: $(VENV)/.installed-test
	$(BIN)/python -m simulator.build

clean:
	rm -rf var/ .pytest_cache .ruff_cache .mypy_cache
	rm -f simulator/*.so simulator/policies/*.so simulator/_compiled.manifest
