# Two commands for readers: `make lab` and `make test`. Both set up .venv first.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium

.PHONY: lab test notebooks trec chunks evaluate evaluate-runs bench clean

# (Re)install only when a requirements file or the project file changes.
$(STAMP): requirements.txt requirements-test.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, by exact version: the CPU wheel (an unpinned torch pulls a multi-GB CUDA build).
	$(PY) -m pip install --quiet "$$(grep -E '^torch==' requirements.txt)"
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-test.txt
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

# `make evaluate [CORPUS=folder GOLDEN=file.csv] [K=3] [KS="1 3 5 10"] [CHUNK_SIZE=512] [MODEL_NAME=...]
#  [RERANKER=sentence|folder] [REPORT=name]`, and `make evaluate-runs (QRELS=file | GOLDEN=file.csv CORPUS=folder)
#  RUNS="a.trec b.trec" [...]`: a report in a new folder output/REPORT/ (see the README's "Your own data").
# Every variable reaches retrieval_eval/cli.py through the environment as typed ($(value ...): no make
# expansion, no path function splitting it at spaces); the runner checks them all at once. START_DIR is
# PWD as make received it: a relative path is refused when it names another folder than the one make runs in.
# Adding a parameter: its name here and one line in cli.PARAMETERS.
PARAMETERS := CORPUS GOLDEN QRELS RUNS MODEL_NAME CHUNK_SIZE K KS RERANKER REPORT
$(foreach name,$(PARAMETERS),$(eval override $(name) := $$(value $(name))))
export $(PARAMETERS)
export START_DIR := $(PWD)

evaluate: $(STAMP)
	$(PY) -m retrieval_eval.cli evaluate

evaluate-runs: $(STAMP)
	$(PY) -m retrieval_eval.cli evaluate-runs

# Batch evaluator against pytrec_eval, and retrieval at 100,000 chunks (prints the figures; a few minutes).
bench: $(STAMP)
	$(PY) benchmarks/bench.py

clean:
	rm -rf $(VENV) .cache
