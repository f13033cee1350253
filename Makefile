# Accelerator sizing service. `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
WORKERS ?= 2
THREADS ?= 4
# Two stamps: make run installs what serving needs; make test (and the tools' targets) add the
# test extras on top.
RUN_STAMP := $(VENV)/.installed-run
MCP_STAMP := $(VENV)/.installed-mcp
STAMP := $(VENV)/.installed
MCP_PORT ?= 8001

.DEFAULT_GOAL := help
.PHONY: help install run mcp-install mcp mcp-http test check spec validate fit bench flood fuzz soak clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

# The MCP server's library is an extra: the REST service does not need it. Its install speaks
# on stderr only, because make mcp's stdout is the protocol a desktop assistant reads.
$(MCP_STAMP): $(RUN_STAMP)
	@$(BIN)/python -m pip install --quiet -e '.[mcp]' >&2
	@touch $(MCP_STAMP)

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(MCP_STAMP) $(STAMP)

install: $(STAMP) ## create .venv and install the service with its test tools

run: $(RUN_STAMP) ## serve the API with gunicorn on http://127.0.0.1:$(PORT) (PORT, WORKERS, THREADS; only what serving needs)
	PORT=$(PORT) WORKERS=$(WORKERS) THREADS=$(THREADS) GUNICORN=$(BIN)/gunicorn deploy/entrypoint.sh

mcp-install: $(MCP_STAMP) ## install what make mcp needs, once, before an assistant starts it (it waits about 60 s for an answer)

mcp: $(MCP_STAMP) ## the MCP server on stdio for a desktop assistant (run as make -s mcp; SIZING_URL: call a running service)
	@$(BIN)/python -m service.mcp_server

mcp-http: $(MCP_STAMP) ## the MCP server over streamable HTTP on http://127.0.0.1:$(MCP_PORT)/mcp (MCP_PORT, SIZING_URL)
	$(BIN)/python -m service.mcp_server --http --port $(MCP_PORT)

# The coverage the suite keeps (97 % when the floor was set): a drop below fails make test.
COVERAGE_FLOOR ?= 95

test: $(STAMP) ## run the whole test suite once, under coverage with a floor (fixed seeds; no timing thresholds)
	$(BIN)/python -m pytest -p no:cacheprovider --cov --cov-report=term --cov-fail-under=$(COVERAGE_FLOOR)

check: $(STAMP) ## ruff (lint, imports, complexity), mypy on the domain, openapi.yaml fresh, every message translated, the alerting rules (promtool)
	$(BIN)/ruff check service tests
	$(BIN)/mypy
	$(BIN)/python -m service.api.spec --check
	$(BIN)/python -m service.i18n --check
	PYTHON=$(BIN)/python deploy/prometheus/check-rules.sh

spec: $(STAMP) ## regenerate openapi.yaml's components from the schemas (paths stay hand-written)
	$(BIN)/python -m service.api.spec

validate: $(STAMP) ## estimates against published measurements, by regime; writes docs/accuracy.md
	$(BIN)/python -m service.accuracy.validate --out docs/accuracy.md

fit: $(STAMP) ## refit the engines' constants on the published runs (prints; engines.py is edited by hand)
	$(BIN)/python -m service.accuracy.fit

# llm-analysis, the peer estimator make bench compares a batch item with, in its own venv.
PEER := .venv-llm-analysis
$(PEER)/bin/python:
	$(PYTHON) -m venv $(PEER)
	$(PEER)/bin/python -m pip install --quiet "llm-analysis==0.2.2"

bench: $(STAMP) $(PEER)/bin/python ## new questions against the framework floor under gunicorn, llm-analysis in process; writes docs/performance.md
	@command -v wrk >/dev/null || echo "wrk not found (apt-get install wrk): using a Python load generator"
	LLM_ANALYSIS_PYTHON=$(PEER)/bin/python $(BIN)/python -m tests.bench.run

fuzz: $(STAMP) ## schemathesis against the running server with many examples; the property tests with fresh random draws
	$(BIN)/python -m tests.bench.fuzz --max-examples 300
	$(BIN)/python -m pytest -q -p no:cacheprovider -m hypothesis --hypothesis-profile=random

flood: $(STAMP) ## one key floods the costliest requests and slow headers at the Kubernetes settings; thresholds on another key's p99 and /healthz
	$(BIN)/python -m tests.bench.flood

soak: $(STAMP) ## a few minutes at twice the bench's concurrency, one worker killed midway
	$(BIN)/python -m tests.bench.soak

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) $(PEER) .pytest_cache .hypothesis *.egg-info .coverage
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
