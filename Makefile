# `make demo` and `make test` work on a fresh machine with Python 3.11, pip and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The student environment (requirements-student.txt: what Colab has), for tests.
STUDENT_VENV := .venv-student
DEMO_OUT := build/demo

.PHONY: install demo quick test build check examples clean

install: $(VENV)/.installed

# A venv belongs to the folder it was made in: its scripts start that folder's Python, and the editable install
# runs that folder's code.  A course copied elsewhere (`cp -a course elsewhere/`, a second machine) brings a venv
# whose `autograder` cannot start there, or, worse, runs the first folder's code, and whose pip installs into the
# first folder's venv.  Such a venv is made again here, from scratch.
VENV_HOME := $(abspath $(VENV))
VENV_MOVED := $(shell $(PYTHON) -c "import pathlib, re, sys; a = pathlib.Path(sys.argv[1], 'bin', 'activate'); \
  t = a.read_text(errors='replace') if a.is_file() else None; \
  print('' if t is None or re.search(r'VIRTUAL_ENV=[\x22\x27]?' + re.escape(sys.argv[1]) + r'[\x22\x27]?\s*$$', t, re.M) \
        else 'moved')" "$(VENV_HOME)" 2>/dev/null)

ifneq ($(VENV_MOVED),)
.PHONY: $(VENV)/.installed
endif

# The grader alone, as `pip install .` gives it to an instructor (what `make demo` needs), to the same pins.
# constraints.txt holds every pin of pyproject.toml but the other graders' groups, so the venvs made below
# (tests, student, otter, nbgrader) get the same versions.  pip brings uv (a pin of the `test` group), and uv
# the rest: the same pins in a fraction of pip's time (a copied course makes its venv again; CI makes several).
UV_PIP = $(BIN)/uv pip install --quiet -c $(VENV)/constraints.txt
# Bytecode is compiled ahead, as pip does: the sandbox's kernels cannot write it into the venv, so without it every
# kernel would compile what it imports again.  Not the packages' own test suites (a third of the files: pandas',
# sympy's, numba's...), which no kernel imports: uv's --compile-bytecode compiled those too, 31 CPU-s in all against
# 19.  compileall also leaves alone what an earlier install compiled.  A file it cannot compile is compiled, or
# fails, when it is imported, as it would without this step: no reason to stop the install.  -x is matched against
# the whole path, so the pattern starts at site-packages: a course checked out under a folder named `tests` would
# otherwise have nothing compiled.
COMPILE_BYTECODE = $(BIN)/python -m compileall -q -j0 -x '/site-packages/(.+/)?tests?/' \
  "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
  || echo "some files were not compiled ahead: each is compiled as it is imported"

$(VENV)/.installed: pyproject.toml
	$(if $(VENV_MOVED),@echo "$(VENV) was made in another folder (copied here?): making it again for $(CURDIR)" && rm -rf $(VENV))
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
	  print('\n'.join(p['dependencies'] + p['optional-dependencies']['test'] + p['optional-dependencies']['student']))" \
	  > $(VENV)/constraints.txt
	$(BIN)/pip install --quiet --disable-pip-version-check -c $(VENV)/constraints.txt uv
	$(UV_PIP) --python $(BIN)/python -e .
	$(COMPILE_BYTECODE)
	touch $@

# What the tests need on top: pytest and playwright (the `test` group).
$(VENV)/.test-installed: $(VENV)/.installed
	$(UV_PIP) --python $(BIN)/python -e '.[test]'
	$(COMPILE_BYTECODE)
	touch $@

# The student environment, exactly as a student makes it from requirements-student.txt
# (numpy, sympy, ipykernel, JupyterLab; no autograder): the tests run student notebooks in it.
# Its bytecode is compiled as each module is first imported, not ahead (34 CPU-s, against under 1): its kernels are
# not sandboxed and may write it, and they import a small part of JupyterLab's packages.
$(STUDENT_VENV)/.installed: requirements-student.txt $(VENV)/.test-installed
	rm -rf $(STUDENT_VENV)
	$(PYTHON) -m venv $(STUDENT_VENV)
	$(UV_PIP) --python $(STUDENT_VENV)/bin/python -r requirements-student.txt
	touch $@

# The example classes are not the course's students: graded without the roster into build/demo/, they
# leave the course's grades (grades/) and records (grades/course.db) exactly as they were.
demo: install
	for folder in examples/*/submissions; do \
	  id=$$(basename $$(dirname $$folder)); \
	  $(BIN)/autograder grade --assignment $$id --out $(DEMO_OUT)/$$id --no-roster $$folder || exit 1; \
	  $(BIN)/autograder feedback --out $(DEMO_OUT)/$$id || exit 1; \
	  $(BIN)/autograder report --out $(DEMO_OUT)/$$id || exit 1; \
	done
	@echo "feedback pages: $(DEMO_OUT)/<assignment>/feedback/<student>/feedback.html"
	@echo "class reports:  $(DEMO_OUT)/<assignment>/report.html"

# The tiers (markers in pyproject.toml).  quick: after each change, under 90 s of CPU (CONTRIBUTING.md); it needs
# no kernel, browser, other grader or second user, so only the test tools.
QUICK := not kernel and not browser and not peers and not conditions and not slow and not alone

# The tests write bytecode, whatever the environment says (some set PYTHONDONTWRITEBYTECODE): without it every
# test worker rewrites every test module's asserts again (6 s of CPU each) and every `autograder` the tests
# start compiles the grader again (0.45 s each).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

quick: $(VENV)/.test-installed
	$(PYTEST) -n auto -q -m "$(QUICK)"

# Everything: in parallel, then the tests that must not share the machine with that tier (they judge time, or change
# the checkout's own file modes), on two workers: otter's and nbgrader's runs of the class built around speed side
# by side, one process each on two cores, and every other `alone` test one at a time beside them (their group,
# tests/conftest.py): the one process they make at a time left a core idle when they had the machine to themselves.
# One worker more than there are cores: many tests spend part of their time waiting for a kernel or a
# subprocess to start, which another worker fills; worksteal keeps the long tests from ending the run alone.
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')

# What the tests need, made side by side: the browser (apt's downloads and unpacking) from the start, and the three
# test venvs (uv's) once the grader's own venv, whose uv and constraints they use, is made.
TEST_VENVS := $(STUDENT_VENV)/.installed .venv-otter/.installed .venv-nbgrader/.installed

.PHONY: test-setup browser
test-setup: $(VENV)/.test-installed $(TEST_VENVS) browser

browser:
	sh tests/browser/install.sh

test:
	$(MAKE) -j4 test-setup
	$(PYTEST) -n $(TEST_WORKERS) --dist worksteal -m "not alone" --durations=30
	$(PYTEST) -n 2 --dist loadgroup -m alone --durations=10

build: install
	$(BIN)/autograder build

check: install
	$(BIN)/autograder build --check

# Regenerate the example classes after a student notebook changes.
examples: install
	for script in examples/*/make_submissions.py; do $(BIN)/python $$script; done

clean:
	rm -rf $(VENV) $(STUDENT_VENV) build

# Throwaway venvs for the other graders (autograder export, tests/export/test_engine_agreement.py,
# benchmarks/grade_throughput.py): the [project.optional-dependencies] groups `otter`
# and `nbgrader` of pyproject.toml, plus the student kernel's packages at our pins.
OTTER_VENV := .venv-otter
NBGRADER_VENV := .venv-nbgrader

$(OTTER_VENV)/.installed: pyproject.toml $(VENV)/.installed
	rm -rf $(OTTER_VENV)
	$(BIN)/python -m autograder.export.tools install otter

$(NBGRADER_VENV)/.installed: pyproject.toml $(VENV)/.installed
	rm -rf $(NBGRADER_VENV)
	$(BIN)/python -m autograder.export.tools install nbgrader
