# Two commands for readers: `make lab` and `make test`. Both set up .venv first.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium

.PHONY: lab test notebooks trec chunks evaluate evaluate-runs bench clean

# (Re)install only when a requirements file or the project file changes.
$(STAMP): requirements.txt requirements-model.txt requirements-test.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, alone, by its exact version (see requirements-model.txt).
	$(PY) -m pip install --quiet "$$(grep -E '^torch==' requirements-model.txt)"
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-model.txt -r requirements-test.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(LAB_ARGS)

test: $(STAMP) $(CHROMIUM)
	$(PY) -m pytest

# Debian's Chromium for the browser test (tests/test_browser.py drives it with Playwright, whose
# own browser download does not work here). Installed when missing and we may use apt-get.
$(CHROMIUM):
	@if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; \
	else \
	  echo "No $(CHROMIUM) and no root apt-get: install Debian's chromium, or tests/test_browser.py is skipped."; \
	fi

# Re-execute every notebook in place and save its outputs (commit them: readers see them on GitHub),
# the same way the notebook test executes them; no widget state is saved.
notebooks: $(STAMP)
	$(PY) -m pytest tests/test_notebooks.py --update-notebooks -q

# Write the golden set as TREC qrels and each retriever's rankings as a TREC run to output/trec/.
trec: $(STAMP)
	$(PY) -c "import helpers as h; s = h.evaluation_setup(progress=True); print(*h.export_trec(s.runs, s.qrels), sep='\n')"

# Rebuild data/chunks.jsonl from data/corpus (a test checks the stored file equals a rebuild).
chunks: $(STAMP)
	$(PY) -c "import helpers as h; h.write_chunks(h.split_into_chunks(h.load_corpus(), h.load_tokenizer()))"

# `make evaluate CORPUS=folder GOLDEN=file.csv`: notebook 05 on your data, run with papermill, as a report
# in output/REPORT/ (report.ipynb and report.html; REPORT defaults to the golden file's folder name).
# The variables reach retrieval_eval/evaluate_report.py through the environment, unchanged: no make
# path function touches a path (they split it at spaces). Relative paths start from START_DIR, the
# folder make was started from (also with make -C). Unset variables take the runner's defaults.
# $(value ...) keeps the text as typed: make would expand a "$" in it.
override CORPUS := $(value CORPUS)
override GOLDEN := $(value GOLDEN)
override CHUNK_SIZE := $(value CHUNK_SIZE)
override K := $(value K)
override MODEL_NAME := $(value MODEL_NAME)
override REPORT := $(value REPORT)
export CORPUS GOLDEN CHUNK_SIZE K MODEL_NAME REPORT
export START_DIR := $(or $(PWD),$(CURDIR))

evaluate: $(STAMP)
	$(PY) -m retrieval_eval.evaluate_report

# `make evaluate-runs QRELS=qrels.txt RUNS="run1.trec run2.trec" [KS="1 3 5 10"] [K=3] [REPORT=name]`, or GOLDEN=file.csv
# CORPUS=folder [CHUNK_SIZE=512] [MODEL_NAME=...] instead of QRELS: score TREC runs from any engine. Writes
# output/REPORT/ (scores.csv, report.ipynb, report.html). Every variable reaches the Python runner unchanged through
# the environment (no make path functions); RUNS is split like a shell command line: quote a path with spaces.
# Relative paths start from START_DIR, as for `make evaluate`; unset variables take the runner's defaults.
override QRELS := $(value QRELS)
override RUNS := $(value RUNS)
override KS := $(value KS)
export QRELS RUNS KS
evaluate-runs: $(STAMP)
	$(PY) -m retrieval_eval.evaluate_runs

# Batch evaluator against pytrec_eval, and retrieval at 100,000 chunks (prints the figures; a few minutes).
bench: $(STAMP)
	$(PY) benchmarks/bench.py

clean:
	rm -rf $(VENV) .cache
