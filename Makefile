# Two commands for readers: `make lab` and `make test`. Both set up .venv first.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium

.PHONY: lab test notebooks chunks clean

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

# Re-execute every notebook in place and save its outputs (commit them: readers see them on GitHub).
# No widget state is saved: GitHub and nbviewer refuse to render some saved states.
notebooks: $(STAMP)
	cd notebooks && ../$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.store_widget_state=False --ExecutePreprocessor.timeout=900 *.ipynb

# Rebuild data/chunks.jsonl from data/corpus (a test checks the stored file equals a rebuild).
chunks: $(STAMP)
	$(PY) -c "import helpers as h; h.write_chunks(h.chunk_corpus(h.load_corpus(), h.load_tokenizer()))"

clean:
	rm -rf $(VENV) .cache
