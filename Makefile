# Two commands do all the set-up on a fresh machine (python3 + Java present):
#   make demo   -- create/update the virtual environment, then run the main job
#   make test   -- create/update the virtual environment, then run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= out/demo

.PHONY: demo test bench lock clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/streamplace demo -o $(OUT)

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/optimal_microbench.py

# Regenerate the constraints (lock) file from the current environment.
lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^-e' > constraints.txt

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
