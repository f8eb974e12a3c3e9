"""What every example class's make_submissions.py needs: start from the
student notebook, fill its cells in as a student might, write the hand-in."""

import copy
import json
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def solved(source):
    """A reference cell as a student who solved it would hand it in."""
    return source.replace("### BEGIN SOLUTION", "### BEGIN YOUR CODE").replace("### END SOLUTION", "### END YOUR CODE")


class Kit:
    def __init__(self, assignment_id):
        self.student_path = ROOT / "assignments" / assignment_id / f"{assignment_id}.ipynb"
        reference = nbformat.read(ROOT / "solutions" / assignment_id / f"{assignment_id}.ipynb", as_version=4)
        self.reference = {c.id: solved(c.source) for c in reference.cells if c.cell_type == "code"}
        self.out = ROOT / "examples" / assignment_id / "submissions"

    def correct(self, *cell_ids):
        return {key: self.reference[key] for key in cell_ids}

    def edit(self, key, old, new):
        """The reference cell `key` with one piece of text replaced (which must be there)."""
        assert old in self.reference[key], (key, old)
        return self.reference[key].replace(old, new)

    def write(self, student, replacements, imports=None, append=None):
        """`imports`: new source for the cell with id "imports"; `append`: a cell added at the end."""
        notebook = copy.deepcopy(nbformat.read(self.student_path, as_version=4))
        for cell in notebook.cells:
            if cell.cell_type == "code" and cell.id in replacements:
                cell.source = replacements[cell.id].strip("\n")
        if imports is not None:
            next(c for c in notebook.cells if c.id == "imports").source = imports
        if append is not None:
            cell = nbformat.v4.new_code_cell(append)
            cell.id = f"{student}-extra"
            notebook.cells.append(cell)
        nbformat.validate(notebook)
        nbformat.write(notebook, self.out / f"{student}.ipynb")

    def write_all(self, students):
        """`students`: name -> (cell replacements, options for write or None)."""
        self.out.mkdir(exist_ok=True)
        for student, (replacements, options) in students.items():
            self.write(student, replacements, **(options or {}))

    def listing(self):
        return json.dumps(sorted(p.name for p in self.out.iterdir()))
