"""Paste the check helpers into the cell tagged `autograder-runtime`.

The reference notebook imports them (`from autograder.runtime import *`);
the student notebook carries their source instead, so the public checks run
in Colab with nothing installed and no file uploaded.
"""

import ast
from pathlib import Path

from ... import runtime
from ...core.errors import BuildError

TAG = "autograder-runtime"
HEADER = ("#@title Check helpers: run this cell first { display-mode: \"form\" }\n"
          "# Helpers used by the check cells below. You do not need to read or change them.\n")


def runtime_source():
    source = Path(runtime.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    body = tree.body[1:] if ast.get_docstring(tree) else tree.body
    start = body[0].lineno - 1
    return HEADER + "\n".join(source.splitlines()[start:]) + "\n"


def inline_runtime(notebook, context):
    cells = [c for c in notebook.cells if TAG in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise BuildError(f"{context.assignment.id}: the reference notebook needs exactly one cell "
                         f"tagged {TAG!r} (it has {len(cells)})")
    cells[0].source = runtime_source().rstrip("\n")
    cells[0].metadata.setdefault("cellView", "form")  # Colab shows it folded
    # JupyterLab and VS Code show it collapsed too, instead of a wall of code.
    cells[0].metadata.setdefault("jupyter", {})["source_hidden"] = True
    return notebook
