# Rhetorica: `make run` sets up and opens the app on the bundled sample paper;
# `make test` sets up and runs the whole test suite (this is what CI runs).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	HNSWLIB_NO_NATIVE=1 $(BIN)/pip install --quiet -e ".[train,dev]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/rhetorica gui resources/sample/sample-paper.pdf

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/ruff check .
	$(BIN)/mypy
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/rhetorica bench parse
	$(BIN)/rhetorica bench analyze
	$(BIN)/rhetorica bench encode
	$(BIN)/rhetorica bench gemm
	$(BIN)/rhetorica bench gui

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
