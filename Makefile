# `make demo` and `make test` work on a fresh machine with Python 3.11, pip and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# A Colab-like kernel for tests: only numpy, sympy and ipykernel, no autograder.
STUDENT_VENV := .venv-student
DEMO_OUT := build/demo

.PHONY: install demo test build check examples clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e .
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > $(VENV)/constraints.txt
	touch $@

$(STUDENT_VENV)/.installed: $(VENV)/.installed
	$(PYTHON) -m venv $(STUDENT_VENV)
	$(STUDENT_VENV)/bin/pip install --quiet --disable-pip-version-check -c $(VENV)/constraints.txt numpy sympy ipykernel
	touch $@

demo: install
	$(BIN)/autograder grade --assignment n-queens --out $(DEMO_OUT) examples/n-queens/submissions

test: install $(STUDENT_VENV)/.installed
	$(BIN)/python -m pytest

build: install
	$(BIN)/autograder build

check: install
	$(BIN)/autograder build --check

# Regenerate the example classes after a student notebook changes.
examples: install
	for script in examples/*/make_submissions.py; do $(BIN)/python $$script; done

clean:
	rm -rf $(VENV) $(STUDENT_VENV) build
