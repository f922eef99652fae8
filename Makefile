# Rhetorica: `make run` sets up and opens the app on the bundled sample paper;
# `make test` sets up and runs the whole test suite (this is what CI runs).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test lint bench eval openset clean package

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	HNSWLIB_NO_NATIVE=1 $(BIN)/pip install --quiet -e ".[train,dev,lsp,scale]"
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
	$(BIN)/rhetorica bench suggest

# Every headline quality figure of a bundle (default: the shipped one), JSON under runs/eval/<bundle path>/
# (docs/benchmarks.md quotes them). `make eval BUNDLE=runs/f3/bundle-int8`; the content figure runs the
# untrained baseline (rhetorica export --untrained) in the same process.
BUNDLE ?= resources/models/default
EVAL   := runs/eval/$(subst /,-,$(BUNDLE))
BASELINE := runs/baseline-bundle
$(BASELINE)/manifest.json: | $(STAMP)
	$(BIN)/rhetorica export --untrained --out $(BASELINE)

eval: $(STAMP) $(BASELINE)/manifest.json
	mkdir -p $(EVAL)
	$(BIN)/rhetorica eval roles --data csabstruct --split test --model $(BUNDLE) --threads 2 --json $(EVAL)/csabstruct-test.json
	$(BIN)/rhetorica eval roles --data pmc-sents-full --split test --head adapter --model $(BUNDLE) --threads 2 --json $(EVAL)/pmc-test.json
	$(BIN)/rhetorica eval roles --data sciarg-fine --split train-cl --model $(BUNDLE) --threads 2 --json $(EVAL)/sciarg-cl.json
	$(BIN)/rhetorica eval functions --data gold --split test --model $(BUNDLE) --threads 2 --json $(EVAL)/gold-test.json
	$(BIN)/rhetorica eval functions --data gold2 --split test --model $(BUNDLE) --threads 2 --json $(EVAL)/gold2-test.json
	$(BIN)/rhetorica eval functions --data gold2 --split test --isolated --model $(BUNDLE) --threads 2 --json $(EVAL)/gold2-test-isolated.json
	$(BIN)/rhetorica eval functions --data gold3 --split test --model $(BUNDLE) --threads 2 --json $(EVAL)/gold3-test.json
	$(BIN)/rhetorica eval functions --data gold4 --split test --model $(BUNDLE) --threads 2 --json $(EVAL)/gold4-test.json
	$(BIN)/rhetorica eval suggest-labels --split dev --model $(BUNDLE) --threads 2 --json $(EVAL)/suggest-labels-dev.json
	$(BIN)/rhetorica eval sections --json $(EVAL)/section-kinds.json
	$(BIN)/rhetorica eval figures --skip-mentions --model $(BUNDLE) --threads 2 --json $(EVAL)/figures.json
	$(BIN)/rhetorica eval content --model $(BUNDLE) --against $(BASELINE) --threads 2 --json $(EVAL)/content-scitldr.json
	$(BIN)/rhetorica eval retrieval --data gold --split test --view function --model $(BUNDLE) --threads 2 --json $(EVAL)/gold-function-retrieval.json

# The open-set function test (docs/training.md): train on N of the functions, retrieve the others.
OPENSET := runs/openset
openset: $(STAMP) $(BASELINE)/manifest.json
	$(BIN)/rhetorica data open-set runs/function-labels/v3.jsonl --out $(OPENSET) --seed 1
	for run in 10:norm_softmax: 20:norm_softmax: 40:norm_softmax: 20:norm_softmax+supcon:-supcon; do \
	  n=$${run%%:*}; rest=$${run#*:}; loss=$${rest%%:*}; tag=$${rest#*:}; \
	  $(BIN)/rhetorica train roles --functions $(OPENSET)/seen-$$n.jsonl --function-dev none \
	    --function-loss $$loss --content-weight 0 --out $(OPENSET)/m$$n$$tag --work $(OPENSET)/w$$n$$tag \
	    --epochs 4 --max-minutes 9 --evals-per-epoch 1 --lr-encoder 6e-5 --lr-head 1e-3 --metric-loss none \
	    --max-length 64 --batch-size 64 --threads 1 --seed 31 --no-quantize --no-calibrate \
	    --name open-set-$$n$$tag --version 0.0.1 || exit 1; \
	  $(BIN)/rhetorica eval retrieval --data labels --labels $(OPENSET)/unseen-$$n.jsonl --view function \
	    --model $(OPENSET)/m$$n$$tag --threads 1 --json $(OPENSET)/eval-unseen-$$n$$tag.json || exit 1; \
	  $(BIN)/rhetorica eval retrieval --data gold --split test --unseen-of $(OPENSET)/split-$$n.json \
	    --view function --model $(OPENSET)/m$$n$$tag --threads 1 --json $(OPENSET)/eval-gold-$$n$$tag.json || exit 1; \
	done
	for n in 10 20 40; do \
	  $(BIN)/rhetorica eval retrieval --data labels --labels $(OPENSET)/unseen-$$n.jsonl \
	    --model $(BASELINE) --threads 1 --json $(OPENSET)/base-unseen-$$n.json || exit 1; \
	  $(BIN)/rhetorica eval retrieval --data gold --split test --unseen-of $(OPENSET)/split-$$n.json \
	    --model $(BASELINE) --threads 1 --json $(OPENSET)/base-gold-$$n.json || exit 1; \
	done

# A one-folder desktop app in dist/rhetorica/ (PyInstaller; model bundle, default corpus, sample paper,
# icons, .desktop entry; no torch, so no training).  30-45 s on 2 cores; packaging/README.md.
package: $(STAMP)
	VENV=$(VENV) bash packaging/build.sh

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
