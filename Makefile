# The gather book. `make help` lists the targets.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB     ?= notebooks/en/*.ipynb notebooks/zh/*.ipynb
# pytest-xdist workers: one per core; --dist loadscope keeps each notebook on one kernel.
WORKERS ?= auto
# One CPU thread per notebook kernel: the workers already use every core, and two kernels of
# several threads each on a small machine stall each other's matrix multiplies for seconds.
# (Outputs must not depend on the thread count: `make determinism` runs once with all of them.)
TEST_THREADS ?= 1

.PHONY: help venv test book execute lab determinism clean

help:
	@echo "make test         run every test (unit, edition parity, TOC, nbval over all notebooks)"
	@echo "make book         build the site in both languages into _build/site/ (warnings are errors)"
	@echo "make execute      re-execute notebooks in place (NB=path.ipynb for one)"
	@echo "make lab          open the notebooks in JupyterLab"
	@echo "make determinism  run the notebook suite three times in a row (once with every CPU thread)"

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed; got " + sys.version.split()[0] + " (set PYTHON=...)")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	OMP_NUM_THREADS=$(TEST_THREADS) $(PY) -m pytest -n $(WORKERS) --dist loadscope

book: $(STAMP)
	$(PY) book/build.py

execute: $(STAMP)
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=120 $(NB)
	$(PY) book/tidy_outputs.py $(NB)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/

# Three runs in a row; the second on one worker with every CPU thread, since outputs must not
# depend on the thread count.
determinism: $(STAMP)
	for run in 1 2 3; do \
	  if [ $$run = 2 ]; then threads=$$(nproc); workers=1; else threads=$(TEST_THREADS); workers=$(WORKERS); fi; \
	  echo "== notebook suite, run $$run of 3 (OMP_NUM_THREADS=$$threads, $$workers worker(s))"; \
	  OMP_NUM_THREADS=$$threads $(PY) -m pytest -n $$workers --dist loadscope -q notebooks || exit 1; \
	done

clean:
	rm -rf _build
