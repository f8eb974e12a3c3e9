"""A tiny course with a made-up assignment, to show the engine knows nothing of queens."""

import textwrap

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def cell(kind, cell_id, source, tags=()):
    made = kind(textwrap.dedent(source).strip("\n"))
    made.id = cell_id
    if tags:
        made.metadata["tags"] = list(tags)
    return made


def make_course(root, cells, cases_toml, assignment="squares"):
    (root / "course.toml").write_text(
        '[course]\nname = "mini"\nrepository = "https://github.com/example/mini"\n'
        'points_per_assignment = 5\n')
    notebook = new_notebook(cells=[
        cell(new_markdown_cell, "intro", "# A made-up assignment"),
        cell(new_code_cell, "runtime", "from autograder.runtime import *", ["autograder-runtime"]),
        *cells,
    ])
    notebook.nbformat_minor = 5
    (root / "solutions" / assignment).mkdir(parents=True)
    nbformat.write(notebook, root / "solutions" / assignment / f"{assignment}.ipynb")
    cases = root / "autograder" / "assignments" / assignment
    cases.mkdir(parents=True)
    (cases / "cases.toml").write_text(textwrap.dedent(cases_toml))
    return root
