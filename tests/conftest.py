import fcntl
import json
import os
import re
import shutil
import sys
import types
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.core.assignment import load_assignment
from autograder.core.course import load_course

ROOT = Path(__file__).resolve().parents[1]
# The export-agreement harness is test and benchmark code, not product: it lives in benchmarks/.
sys.path.insert(0, str(ROOT / "benchmarks"))
import engines  # noqa: E402,F401  (re-exported for the tests that compare engines)
STUDENT_PYTHON = ROOT / ".venv-student" / "bin" / "python"


def pytest_collection_modifyitems(items):
    """The `alone` tier runs on two workers, `--dist loadgroup` (Makefile): the other graders' runs of the class
    built around speed go side by side, one per core, and every other `alone` test goes one after another beside
    them, in one group.  Some of those make the checkout's own folders private while an ordinary user's grader
    reads it; others send a grader Ctrl-C or judge a time: none of them may run beside another of them."""
    for item in items:
        if item.get_closest_marker("alone") and not item.get_closest_marker("peers"):
            item.add_marker(pytest.mark.xdist_group("alone-one-at-a-time"))
# The n-queens functions of a cheating hand-in, answered from the dict ANSWERS of expected values it found
# somewhere (what the tests that hide the answers try to find).
# A thief that found expected.json reads cases.toml beside it too: hidden cases' answers are keyed by description.
WITH_HIDDEN_CALLS = '''def _with_hidden_calls(answers, expected_path):
    # Hidden cases' answers are keyed by their descriptions; cases.toml beside them gives their calls.
    import os, tomllib
    try:
        with open(os.path.join(os.path.dirname(expected_path), "cases.toml"), "rb") as handle:
            for case in tomllib.load(handle).get("case", []):
                key = "hidden: " + str(case.get("description", ""))
                if key in answers and "call" in case:
                    answers.setdefault(case["call"], answers[key])
    except Exception:
        pass
    return answers
'''
ANSWERED_FROM_THE_EXPECTED_VALUES = '''def count_solutions(n):
    return ANSWERS[f"count_solutions({n})"]
def get_n(pos):
    return ANSWERS[f"get_n({pos!r})"]
def board2str(pos):
    return ANSWERS[f"board2str({pos!r})"]
def is_solved(pos):
    return ANSWERS[f"is_solved({pos!r})"]
'''


@pytest.fixture(scope="session", autouse=True)
def shared_folder(tmp_path_factory):
    """A folder every pytest-xdist worker of this run shares (pytest removes it with old runs)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    os.environ["AUTOGRADER_TESTS_SHARED"] = str(shared)
    return shared


@pytest.fixture(scope="session")
def course():
    return load_course(ROOT)


@pytest.fixture(scope="session")
def nqueens(course):
    return load_assignment(course, "n-queens")


@pytest.fixture(scope="session")
def nqueens_expected(nqueens):
    return nqueens.load_expected()


def once_per_run(shared_folder, name, make):
    """The JSON record `make()` returns, made once per test run and shared by pytest-xdist's workers: the first
    to get here makes it, the others wait for it under a file lock and read it.  A worker that fails half-way
    writes no record, so the next one makes it again."""
    record = shared_folder / f"{name}.json"
    with open(shared_folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # released when the file closes
        if not record.exists():
            record.write_text(json.dumps(make()))
    return json.loads(record.read_text())


@pytest.fixture(scope="session")
def build_check_of_the_course(shared_folder):
    """`autograder build --check` of the course as it ships (course.toml still names the example repository):
    it runs every assignment's reference, so the tests that read its verdict or its output share one run."""
    from click.testing import CliRunner
    from autograder.cli.main import main

    def check():
        result = CliRunner().invoke(main, ["--course", str(ROOT), "build", "--check"])
        return {"exit_code": result.exit_code, "output": result.output,
                "stdout": result.stdout, "stderr": result.stderr}
    return types.SimpleNamespace(**once_per_run(shared_folder, "build-check-of-the-course", check))


def example_class(assignment_id):
    """The hand-ins of examples/<id>/submissions (notebooks and marimo files), sorted; [] when it has none."""
    folder = ROOT / "examples" / assignment_id / "submissions"
    return sorted(p for p in folder.iterdir() if p.suffix in (".ipynb", ".py")) if folder.is_dir() else []


@pytest.fixture(scope="session")
def example_class_grades():
    """grades(id) -> (out folder, {student: Verdict}) of the example class, graded once per test run for every
    test that only reads its rows (browser/classes.py's graded_class): the engines' agreement, the expected
    scores, class_reports.py's seeds.  CI graded each class once per reader, 15-20 s of CPU each time."""
    from browser.classes import graded_class

    def grades(assignment_id):
        out = graded_class(assignment_id)
        return out, engines.read_ours(load_assignment(load_course(ROOT), assignment_id), out)
    return grades


@pytest.fixture(scope="session")
def peer_class_grades(shared_folder):
    """grades(engine, id) -> {student: Verdict} of the example class as otter-grader ("otter", through its Python
    API) or nbgrader grades it, the students benchmarks/engines.py excludes for that engine left out: run once per
    test run for every test that reads it (the engines' agreement, the exports' own score checks), across
    pytest-xdist's workers too.  nbgrader alone spent 66 s of CI re-grading five of n-queens' students."""
    def grades(engine, assignment_id):
        def run():
            course = load_course(ROOT)
            assignment = load_assignment(course, assignment_id)
            paths = [p for p in example_class(assignment_id)
                     if (engine, assignment_id, p.stem) not in engines.EXCLUDED_STUDENTS]
            work = shared_folder / f"peer-class-{engine}-{assignment_id}"
            shutil.rmtree(work, ignore_errors=True)        # a worker that failed half-way left it
            if engine == "otter":
                # One process through otter's Python API (test_export_otter checks it agrees with `otter run`):
                # a fresh `otter run` per notebook costs seconds of start-up each.
                verdicts = engines.grade_otter(course, assignment, paths, work, via="api")
            else:
                verdicts = engines.grade_nbgrader(course, assignment, paths, work)
            return {s: [v.cases, v.status, v.note] for s, v in verdicts.items()}
        record = once_per_run(shared_folder, f"peer-class-{engine}-{assignment_id}", run)
        return {s: engines.Verdict(*v) for s, v in record.items()}
    return grades


def copy_course(destination):
    """The course's sources and generated files copied into `destination` (made if need be)."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in ("course.toml", "public_rubric.xlsx"):
        shutil.copy(ROOT / name, destination / name)
    for folder in ("solutions", "assignments"):
        shutil.copytree(ROOT / folder, destination / folder)
    shutil.copytree(ROOT / "autograder" / "assignments", destination / "autograder" / "assignments")
    return destination


def set_assignment_table(course_root, table):
    """Replace course.toml's [assignment.n-queens] table (or add one) with the TOML lines `table`."""
    path = course_root / "course.toml"
    text = re.sub(r"(?ms)^\[assignment\.n-queens\]\n.*?(?=^\[|\Z)", "", path.read_text(encoding="utf-8"))
    path.write_text(text.rstrip("\n") + "\n\n[assignment.n-queens]\n" + table, encoding="utf-8")


class _KeptSandbox:
    """A sandbox a class run enters and leaves without closing it: the next class run of this process uses it."""

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def __enter__(self):
        return self.sandbox

    def __exit__(self, *exc):
        return False


_KEPT_SANDBOXES = {}   # (limits, isolation asked for) -> the Sandbox kept, or None where the layer is `users`


@pytest.fixture
def one_sandbox_per_process(monkeypatch, tmp_path_factory):
    """Every class run of the test grades in one sandbox kept for this pytest process, not one of its own.

    Why: starting a sandbox (its zygote imports numpy and sympy) costs about 0.8 s of CPU, more than grading a
    class of two; tests of intake, feedback and release grade some hundred such classes.  A sandbox grading
    one class after another is what a class of a hundred is to the engine (each hand-in a fresh worker, user id
    and folder), so nothing those tests judge changes.  What a sandbox's start and end do (a layer's choice, the
    `users` layer making a run's own hand-ins private, Ctrl-C) is tested by tests that do not use this fixture;
    a sandbox whose layer is `users` is never kept, since what it makes private is each run's own."""
    from autograder.engine.sandbox import DEFAULT_PRELOAD, Sandbox as RealSandbox
    from autograder.grade import class_run

    def sandbox(limits, preload=DEFAULT_PRELOAD, workdir=None, isolation="auto", protect=(), protect_trees=()):
        key = (limits, isolation)   # kept with every module a class may preload, whatever this class's need
        kept = _KEPT_SANDBOXES.get(key)
        if key not in _KEPT_SANDBOXES or (kept is not None and kept.zygote.poll() is not None):   # none, or died
            kept = RealSandbox(limits, workdir=tmp_path_factory.mktemp("kept-sandbox"), isolation=isolation)
            if kept.isolation == "users":
                kept.close()
                kept = None
            _KEPT_SANDBOXES[key] = kept
        if kept is None:
            return RealSandbox(limits, preload=preload, workdir=workdir, isolation=isolation, protect=protect,
                               protect_trees=protect_trees)
        return _KeptSandbox(kept)

    monkeypatch.setattr(class_run, "Sandbox", sandbox)


@pytest.fixture
def course_copy(tmp_path):
    """A private copy of the course's sources and generated files, safe to edit."""
    return copy_course(tmp_path)


@pytest.fixture(scope="session")
def colab_like_kernel(tmp_path_factory):
    """JUPYTER_PATH for a kernel named colab-like: .venv-student, the student environment made from
    requirements-student.txt (numpy, sympy, ipykernel, JupyterLab; no autograder)."""
    if not STUDENT_PYTHON.exists():
        pytest.fail(f"{STUDENT_PYTHON} is missing: run the tests with `make test`, which creates it")
    spec_dir = tmp_path_factory.mktemp("jupyter") / "kernels" / "colab-like"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [str(STUDENT_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab-like (student environment)", "language": "python"}))
    return spec_dir.parents[1]


def run_all(notebook, jupyter_path, monkeypatch, cwd, kernel="colab-like"):
    """Run all, as a student would; raises on the first cell that fails."""
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    NotebookClient(notebook, kernel_name=kernel, timeout=120,
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return notebook


def outputs(cell):
    return "".join(o.get("text", "") for o in cell.outputs)


def reference_namespace(assignment):
    """The reference's functions: every code cell but the demos, run in one namespace."""
    namespace = {}
    for cell in nbformat.read(assignment.solution_path, as_version=4).cells:
        if cell.cell_type == "code" and "demo" not in cell.metadata.get("tags", []):
            exec(compile(cell.source, f"<{cell.id}>", "exec"), namespace)  # noqa: S102 - our own notebook
    return namespace


def without_colab_badge(path):
    """A notebook's text without its Colab badge cell: the badge is the course's address, which
    `autograder init` changes; the example hand-ins are the same class whichever repository hosts it."""
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    notebook.cells = [c for c in notebook.cells if "colab-badge" not in c.get("metadata", {}).get("tags", [])]
    return nbformat.writes(notebook)


def solution_in_a_module(module):
    """alice's notebook with her code moved to `module`.py, the notebook importing it: (notebook, module) as bytes."""
    notebook = json.loads((ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb").read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code" and not c["metadata"].get("tags")]
    module_text = "\n\n".join("".join(c["source"]) for c in code) + "\n"
    for cell in code:
        cell["source"] = ""
    code[0]["source"] = f"from {module} import *"
    return json.dumps(notebook).encode(), module_text.encode()
