"""`autograder export otter`: the assignment as an otter-grader 7 assignment.

    DIR/student/<notebook>          the student notebook, with an otter setup cell and
                                    `grader.check("<function>")` cells (public checks)
    DIR/student/tests/<function>.py public cases only (OK format)
    DIR/student/autograder_checks.py
    DIR/autograder/tests/<function>.py  every case, hidden ones with "hidden": True
    DIR/autograder/autograder_checks.py, otter_config.json, requirements.txt
    DIR/autograder/autograder.zip   the Gradescope autograder (`otter generate`)

One OK test file per tested function; one test case per case, with its points
and hidden flag.  A test case is a doctest that calls `check(...)` from
autograder_checks.py, so values are judged by our rules (to_plain + compare),
printing does not matter and each call has the case's time limit.
The setup cell carries the public tests and the check module, and writes them
when they are missing, so `grader.check` works in Colab with only the notebook.
"""

import json
import subprocess
from pathlib import Path

import nbformat

from ..notebook.preprocessors.public_checks import TAG as PUBLIC_CHECK_TAG
from ..notebook.student_notebook import Context, build_student_notebook, read_reference
from . import checks, tools

IGNORE_TAG = "otter_ignore"        # otter drops these cells when it grades
SETUP_CELL_ID = "otter-setup"
ZIP_NAME = "autograder.zip"
PYTHON_VERSION = "3.11"            # the course's Python (pyproject requires-python)


def test_file_text(assignment, expected, function, hidden=True):
    """One OK-format test file: every case of `function` (public ones only unless `hidden`)."""
    cases = [c for c in assignment.cases if c.function == function and (hidden or not c.hidden)]
    lines = ["OK_FORMAT = True", "", "test = {", f"    \"name\": {function!r},",
             "    \"points\": None,", "    \"suites\": [", "        {", "            \"cases\": ["]
    for case in cases:
        # The students' copy (hidden=False) leaves out the hidden twins a public case requires; the grader's has them.
        code = doctest_code(assignment, case, expected[case.name], hidden)
        lines += ["                {",
                  f"                    \"name\": {case.name!r},",
                  f"                    \"code\": {_string_literal(code)},",
                  f"                    \"hidden\": {case.hidden!r},",
                  "                    \"locked\": False,",
                  f"                    \"points\": {case.points!r},",
                  "                },"]
    lines += ["            ],", "            \"scored\": True,", "            \"setup\": \"\",",
              "            \"teardown\": \"\",", "            \"type\": \"doctest\",", "        },",
              "    ],", "}", ""]
    return "\n".join(lines)


def doctest_code(assignment, case, expected, hidden=True):
    call = checks.check_call(assignment, case, expected, hidden=hidden).splitlines()
    body = [f">>> import {checks.MODULE}"]
    body += [(">>> " if i == 0 else "... ") + line for i, line in enumerate(call)]
    return "\n".join(body) + "\n"


def _string_literal(text):
    if "'''" not in text and not text.endswith("\\"):
        return "r'''\n" + text + "'''"
    return repr(text)


def test_files(assignment, expected, hidden=True):
    files = {}
    for function in assignment.functions():
        if hidden or any(not c.hidden for c in assignment.cases if c.function == function):
            files[f"tests/{function}.py"] = test_file_text(assignment, expected, function, hidden)
    return files


def setup_cell_source(files, otter_requirement):
    """The first code cell: install otter if needed, write the public tests, make `grader`."""
    return "\n".join([
        '#@title Otter-Grader setup: run this cell first { display-mode: "form" }',
        "# Installs otter-grader when it is missing (as in Colab) and writes this notebook's",
        "# public tests beside it, so the grader.check(...) cells work anywhere.",
        "import importlib.util as _util, os as _os, subprocess as _subprocess, sys as _sys",
        "if _util.find_spec(\"otter\") is None:",
        f"    _subprocess.check_call([_sys.executable, \"-m\", \"pip\", \"install\", \"--quiet\", {otter_requirement!r}])",
        "import otter",
        f"_files = {_files_literal(files)}",
        "for _path, _text in _files.items():",
        "    if not _os.path.exists(_path):  # never replace the grader's own copies",
        "        _os.makedirs(_os.path.dirname(_path) or \".\", exist_ok=True)",
        "        with open(_path, \"w\", encoding=\"utf-8\") as _file:",
        "            _file.write(_text)",
        "grader = otter.Notebook(tests_dir=\"tests\")",
    ])


def _files_literal(files):
    return "{\n" + "".join(f"    {path!r}: {text!r},\n" for path, text in files.items()) + "}"


def student_notebook(assignment, expected, files, otter_requirement):
    """Our student notebook, with otter's setup cell and grader.check cells for the public checks."""
    notebook = build_student_notebook(read_reference(assignment), Context(assignment, expected, ""))
    notebook.cells = [c for c in notebook.cells if "colab-badge" not in c.metadata.get("tags", [])]
    # public_checks names each check cell "check-<function>" (underscores as hyphens)
    by_cell_id = {f"check-{f}".replace("_", "-"): f for f in assignment.functions()}
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if PUBLIC_CHECK_TAG in tags and cell.get("id") in by_cell_id:
            function = by_cell_id[cell.id]
            cell.source = (f"# Public checks for {function}(): run this cell after the one above.\n"
                           f"grader.check({function!r})")
        if set(tags) & set(assignment.skip_tags):
            # our grader skips demo and check cells; otter skips cells tagged otter_ignore
            cell.metadata["tags"] = [*tags, IGNORE_TAG]
    setup = nbformat.v4.new_code_cell(setup_cell_source(files, otter_requirement))
    setup.id = SETUP_CELL_ID
    setup.metadata["cellView"] = "form"
    first_code = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code")
    notebook.cells.insert(first_code, setup)
    nbformat.validate(notebook)
    return notebook


def otter_config(assignment, autograder_dir="/autograder"):
    return {
        "lang": "python",
        "autograder_dir": autograder_dir,
        # hidden test results appear once grades are published, as with our own Gradescope export
        "show_hidden": True,
        "points_possible": assignment.max_score,
    }


def student_requirements():
    """What the student's kernel imports, pinned as in our environment: what the course offers of Colab's packages
    (core/colab.py), so `import tqdm` or `import scipy` costs a notebook nothing on otter's Gradescope image
    either."""
    from importlib.metadata import PackageNotFoundError, version

    lines = []
    for package in tools.COLAB_PACKAGES:
        try:
            lines.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            lines.append(package)
    return lines


def export(course, assignment, out_dir, autograder_dir="/autograder", make_zip=True, otter=None,
           requirements=None):
    """Write the otter assignment into out_dir; return the paths written."""
    out_dir = Path(out_dir)
    expected = assignment.load_expected()
    module = checks.module_source()
    public = test_files(assignment, expected, hidden=False)
    every = test_files(assignment, expected, hidden=True)
    otter_requirement = tools.pin("otter", "otter-grader", course.root) \
        if (course.root / "pyproject.toml").is_file() else "otter-grader"
    written = []

    def write(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)

    student = out_dir / "student"
    for stale in (student / "tests", out_dir / "autograder" / "tests"):
        for old in stale.glob("*.py") if stale.is_dir() else ():
            old.unlink()
    for relative, text in public.items():
        write(student / relative, text)
    write(student / checks.FILENAME, module)
    notebook = student_notebook(assignment, expected, {**public, checks.FILENAME: module}, otter_requirement)
    write(student / assignment.notebook, nbformat.writes(notebook) + "\n")

    grader_dir = out_dir / "autograder"
    for relative, text in every.items():
        write(grader_dir / relative, text)
    write(grader_dir / checks.FILENAME, module)
    write(grader_dir / "otter_config.json", json.dumps(otter_config(assignment, autograder_dir), indent=2) + "\n")
    write(grader_dir / "requirements.txt", "\n".join(requirements or student_requirements()) + "\n")
    if make_zip:
        written.append(generate_zip(grader_dir, otter or tools.executable("otter", course.root)))
    return written


def generate_zip(grader_dir, otter):
    """Run `otter generate` in grader_dir; return the zip's path."""
    grader_dir = Path(grader_dir)
    command = [otter, "generate", "--tests-dir", "tests", "--output-path", ZIP_NAME,
               "--config", "otter_config.json", "--requirements", "requirements.txt",
               "--python-version", PYTHON_VERSION, checks.FILENAME]
    try:
        result = subprocess.run(command, cwd=grader_dir, capture_output=True, text=True)
    except OSError as error:
        raise tools.ToolError(f"cannot run {otter}: {error.strerror}") from None
    if result.returncode != 0:
        raise tools.ToolError(f"otter generate failed ({result.returncode}): "
                              f"{(result.stdout + result.stderr).strip()[-2000:]}")
    return grader_dir / ZIP_NAME
