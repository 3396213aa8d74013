# The gather book. `make help` lists the targets.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB     ?= notebooks/*/*.ipynb
# pytest-xdist workers: one per core; --dist loadscope keeps each notebook on one kernel.
WORKERS ?= auto
# One CPU thread per notebook kernel: the workers already use every core, and two kernels of
# several threads each on a small machine stall each other's matrix multiplies for seconds.
# (Outputs must not depend on the thread count: `make determinism` runs them with all of them.)
TEST_THREADS ?= 1
# Compiled Python is kept between runs (__pycache__/, ignored by git and by the site build), even
# where the environment sets PYTHONDONTWRITEBYTECODE: each test process imports some 150 modules
# of the book's own, and pytest rewrites each test module, 9 s of every process otherwise.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: help venv test test-fast test-notebooks test-notebooks-torch test-all book execute lab determinism clean pdf npm

help:
	@echo "make test         the tests under tests/ (unit, exercises, the notebooks' structure, the site:"
	@echo "                  built once into _build/site/, its browser tests on a sample of pages; the"
	@echo "                  per-exercise, per-answer, per-puzzle and searched-message tests on 1 in 8"
	@echo "                  of their cases, a page of each edition in one edition, the whole-program"
	@echo "                  runs (JupyterLab, ...: conftest.py's CI_ONLY) left to make test-all)"
	@echo "make test-fast    the unit and exercise tests without the slow ones (the loop of fixing a checker)"
	@echo "make test-notebooks  execute every notebook and compare its outputs (nbval)"
	@echo "make test-notebooks-torch TORCH=2.15.0  the same on another torch release, in its own venv"
	@echo "                  (.venv-torch2.15.0, several GB; a maintainer's check, not CI)"
	@echo "make test-all     what CI runs: test + test-notebooks, every case, every page in the browser,"
	@echo "                  the site built afresh"
	@echo "make book         build the site in both languages into _build/site/ (warnings are errors)"
	@echo "make pdf          print the book (one PDF per language) and the one-page cheat sheets into"
	@echo "                  _build/pdf/, and into _build/site/pdf/ when the site is built (Chromium, poppler-utils)"
	@echo "make execute      re-execute notebooks in place (NB=path.ipynb for one)"
	@echo "make lab          open the notebooks in JupyterLab"
	@echo "make determinism  run the notebook suite once more, on one kernel with every CPU thread"
	@echo "make npm          install what the site tests load into the browser (axe-core) into node_modules/"

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed; got " + sys.version.split()[0] + " (set PYTHON=...)")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

# The site tests' browser-side tools from npm (axe-core for tests/site/test_accessibility.py), the
# versions of package-lock.json, into node_modules/: installed here, never fetched by a test.
NPM_STAMP := node_modules/.installed
$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

npm: $(NPM_STAMP)

# The site tests build the site once (tests/site/conftest.py; the build starts with the session,
# beside the other tests, and an unchanged tree reuses the last one) and leave it in _build/site.
# The tests that run once per exercise, declared answer, puzzle or searched message run 1 in 8 of
# their cases here, the browser tests open one page of each kind (tests/site/site_helpers.py's
# SAMPLE) and a page of each edition in one edition, and the whole-program runs (JupyterLab, the
# benchmark, ...) not at all (GATHERBOOK_LANE=test: conftest.py's lanes); make test-all runs them
# all. tests/ holds no notebook with code to run: nbval is not loaded.
test: $(STAMP)
	GATHERBOOK_LANE=test GATHERBOOK_SITE_OUT=$(CURDIR)/_build/site OMP_NUM_THREADS=$(TEST_THREADS) \
	  $(PY) -m pytest -n $(WORKERS) --dist worksteal -o addopts="-p no:cacheprovider" -p no:nbval \
	  -p no:anyio tests

test-notebooks: $(STAMP)
	OMP_NUM_THREADS=$(TEST_THREADS) $(PY) -m pytest -n $(WORKERS) --dist loadscope notebooks

# The notebook suite on another torch release, for maintainers (not CI): its own venv,
# .venv-torch<release> (ignored by git), with requirements.txt's pins but torch's, then nbval on
# every notebook there. PyPI's wheel of a release other than the pinned CPU build is the CUDA one,
# several GB (it runs on a CPU). e.g. make test-notebooks-torch TORCH=2.15.0
TORCH ?=
TORCH_VENV = .venv-torch$(TORCH)
test-notebooks-torch:
	@case "$(TORCH)" in [0-9]*.[0-9]*) ;; *) echo "TORCH=<release> is needed, e.g. make test-notebooks-torch TORCH=2.15.0 (got '$(TORCH)')"; exit 2;; esac
	test -x $(TORCH_VENV)/bin/python || $(PYTHON) -m venv $(TORCH_VENV)
	sed 's/^torch==.*/torch==$(TORCH)/' requirements.txt > $(TORCH_VENV)/requirements.wanted
	cmp -s $(TORCH_VENV)/requirements.wanted $(TORCH_VENV)/requirements.txt || { \
	  $(TORCH_VENV)/bin/python -m pip install --quiet -r $(TORCH_VENV)/requirements.wanted && \
	  mv $(TORCH_VENV)/requirements.wanted $(TORCH_VENV)/requirements.txt; }
	$(TORCH_VENV)/bin/python -c 'import torch; print("torch", torch.__version__)'
	OMP_NUM_THREADS=$(TEST_THREADS) $(TORCH_VENV)/bin/python -m pytest -n $(WORKERS) --dist loadscope notebooks

# everything (the pytest paths of pyproject.toml: tests and notebooks): every case of the per-case
# tests, every page in the browser, and the site built afresh (never a former session's build)
test-all: $(STAMP)
	GATHERBOOK_LANE=all GATHERBOOK_SITE_REUSE=0 GATHERBOOK_SITE_PAGES=all \
	  GATHERBOOK_SITE_OUT=$(CURDIR)/_build/site OMP_NUM_THREADS=$(TEST_THREADS) \
	  $(PY) -m pytest -n $(WORKERS) --dist loadscope

# without nbval (its import compiles grammars for seconds in every worker) and without the two
# files that the fast lane skips whole (FAST_SKIP in conftest.py): they would still be imported
test-fast: $(STAMP)
	GATHERBOOK_FAST=1 OMP_NUM_THREADS=$(TEST_THREADS) $(PY) -m pytest -n $(WORKERS) --dist worksteal -q -m "not slow" \
	  -o addopts="-p no:cacheprovider" -p no:nbval -p no:anyio tests/unit tests/exercises \
	  --ignore=tests/unit/test_sphinx_downloads.py --ignore=tests/exercises/test_notebook_exercises.py

book: $(STAMP)
	$(PY) book/build.py

# The printed book and cheat sheets (book/pdf/build.py); published beside the site's pages, in
# _build/site/pdf/, where the landing and "Run it yourself" pages link (the site's budget is the
# pages; the PDFs have their own, tests/site/test_pdf.py).
pdf: $(STAMP)
	$(PY) book/pdf/build.py $(if $(wildcard _build/site/index.html),--publish _build/site)

execute: $(STAMP)
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=120 $(NB)
	$(PY) tools/notebooks.py tidy $(NB)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/

# The notebook suite once more, on one kernel with every CPU thread: outputs must not depend on
# the thread count (make test runs it with one thread per kernel, on every core).
determinism: $(STAMP)
	OMP_NUM_THREADS=$$(nproc) $(PY) -m pytest -n 1 --dist loadscope -q notebooks

clean:
	rm -rf _build
