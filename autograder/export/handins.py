"""Hand-ins of ours, read as notebooks, for grading them with another engine.

Used to grade the same class with otter-grader and nbgrader (the agreement
test, the benchmark), and by an instructor moving a class's hand-ins to
another engine.  A notebook keeps its cells and their ids; a .py file is
split into cells at `# %%` lines, as our grader reads it.
"""

import ast
import copy
from pathlib import Path

import nbformat

from ..intake.cells import SubmissionError, read_cells


def read_handin(path):
    """The hand-in at `path` as a v4 notebook; SubmissionError if it is not one."""
    path = Path(path)
    cells = read_cells(path)          # raises SubmissionError for unreadable or empty files
    if path.suffix == ".py":
        notebook = nbformat.v4.new_notebook()
        for cell in cells:
            notebook.cells.append(nbformat.v4.new_code_cell(cell.source.strip("\n")))
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                           "language": "python"}
        return notebook
    return nbformat.reads(path.read_bytes().decode("utf-8-sig"), as_version=4)


def defined_names(source):
    """Top-level names a cell defines (functions, classes, assignments, imports)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def for_otter(assignment, handin, ignore_tag="otter_ignore"):
    """The hand-in with the cells our grader skips (demo, public checks) tagged for otter to skip."""
    notebook = copy.deepcopy(handin)
    for cell in notebook.cells:
        tags = list(cell.metadata.get("tags", []))
        if set(tags) & set(assignment.skip_tags) and ignore_tag not in tags:
            cell.metadata["tags"] = [*tags, ignore_tag]
    return notebook


__all__ = ["SubmissionError", "defined_names", "for_otter", "read_handin"]
