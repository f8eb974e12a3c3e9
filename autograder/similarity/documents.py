"""What is compared: each student's own code, without the template every student starts from.

A document is one hand-in's code cells (outputs and markdown were never
kept) and helper .py files.  Left out: every cell identical to one of the
student notebook's (the check helpers, the check cells, the given
functions, demos left as they were), and every fingerprint the student
notebook itself has (its function headers, docstrings and stubs, a given
function a student re-indented).  What is left is what the student wrote.

Documents also come from elsewhere (`--against`): earlier semesters'
gradebooks, and notebooks or .py files such as a solution found online.
"""

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..core.errors import AutograderError
from ..gradebook.read import FeedbackError, load_code
from ..intake.cells import SubmissionError, parse
from ..intake.files import UnsafeFile, read_capped
from .fingerprints import fingerprint

MAX_GRADEBOOKS = 200        # gradebooks found under one --against folder
MAX_DEPTH = 4               # folders deep that --against looks for them


class SimilarityError(AutograderError):
    """The comparison cannot run at all (one line for the user)."""


@dataclass
class Document:
    key: str                # unique: the student's key, or "past:<where>:<key>", or "file:<name>"
    label: str              # for people: "Carol King (canvas:1003)", "fall-2026: Bob (canvas:77)", "sol.ipynb"
    origin: str             # "class", "past" or "file"
    pieces: list = field(default_factory=list)   # fingerprints.Piece, the student's own
    note: str = ""          # why it is not compared, or what was cut

    @property
    def hashes(self):
        return {int(h) for piece in self.pieces for h in piece.hashes}


class Template:
    """The student notebook: its cells' texts and fingerprints, left out of every document."""

    def __init__(self, assignment):
        self.texts, self.hashes, self.check_heads = set(), set(), set()
        if not assignment.student_path.is_file():
            raise SimilarityError(f"{assignment.student_path} is missing: run `autograder build`")
        notebook = nbformat.read(assignment.student_path, as_version=4)
        for number, cell in enumerate(c for c in notebook.cells if c.cell_type == "code"):
            self.texts.add(cell.source.strip())
            self.hashes |= {int(h) for h in fingerprint("cell", str(number), cell.source).hashes}
            if "public-check" in cell.metadata.get("tags", []):
                self.check_heads.add(cell.source.strip().split("\n", 1)[0])

    def own(self, kind, name, text):
        """The piece as the student's own fingerprints, or None when it is the template's or has none left."""
        if kind == "cell" and (text.strip() in self.texts or self._a_former_check_cell(text)):
            return None
        piece = fingerprint(kind, name, text)
        keep = [i for i, h in enumerate(piece.hashes) if int(h) not in self.hashes]
        if not keep:
            return None
        return type(piece)(piece.kind, piece.name, piece.text, piece.hashes[keep], piece.positions[keep],
                           piece.offsets)


    def _a_former_check_cell(self, text):
        """A check cell of an earlier student notebook (before a case's points, hint or limit changed): headed
        like one of today's, and nothing but a call of run_checks with literal values, which holds no code of
        the student's.  Without this every hand-in made from the former notebook shares it."""
        head, _, rest = text.strip().partition("\n")
        if head not in self.check_heads:
            return False
        try:
            tree = ast.parse(rest)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
            return False
        call = tree.body[0].value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "run_checks"
                and not call.keywords and len(call.args) == 1):
            return False
        try:
            ast.literal_eval(call.args[0])
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return False
        return True


def class_documents(out_dir, assignment, template):
    """One document per student of the gradebook in `out_dir`, every one of them (a note says why one
    has nothing to compare)."""
    return [_document(row, row.student, _who(row), "class", template) for row in load_code(out_dir, assignment.id)]


def against_documents(paths, assignment, template):
    """Documents from earlier semesters' gradebooks (a folder) and from notebooks or .py files (a file)."""
    documents = []
    for path in map(Path, paths):
        if path.is_file():
            documents.append(_file_document(path, template))
        elif path.is_dir():
            documents += _past_documents(path, assignment, template)
        else:
            raise SimilarityError(f"--against {path}: no such file or folder")
    return documents


def _gradebooks(folder):
    """gradebook.db files at most MAX_DEPTH folders below `folder`; linked folders are not followed."""
    found = []
    for here, folders, files in os.walk(folder):
        depth = len(Path(here).relative_to(folder).parts)
        if depth >= MAX_DEPTH:
            folders[:] = []
        folders.sort()
        if "gradebook.db" in files:
            found.append(Path(here) / "gradebook.db")
    return sorted(found)


def _past_documents(folder, assignment, template):
    found = _gradebooks(folder)
    if not found:
        raise SimilarityError(f"--against {folder}: no gradebook.db in it (give an earlier semester's grades "
                              "folder, the one `grade --out` wrote)")
    if len(found) > MAX_GRADEBOOKS:
        raise SimilarityError(f"--against {folder}: more than {MAX_GRADEBOOKS} gradebooks under it: give the "
                              "folders of the semesters to compare")
    documents = []
    for path in found:
        where = str(path.parent.relative_to(folder)) if path.parent != folder else folder.name
        try:
            rows = load_code(path.parent, assignment.id)
        except FeedbackError as error:
            raise SimilarityError(f"--against {path}: {error}") from None
        documents += [_document(row, f"past:{where}:{row.student}", f"{where}: {_who(row)}", "past", template)
                      for row in rows]
    return documents


def _file_document(path, template):
    document = Document(f"file:{path.name}", path.name, "file")
    try:
        cells = parse(read_capped(path), path.name).cells
    except (SubmissionError, UnsafeFile) as error:
        raise SimilarityError(f"--against {path}: {error}") from None
    document.pieces = [p for number, cell in enumerate(cells, 1)
                       if (p := template.own("cell", str(number), cell.source)) is not None]
    if not document.pieces:
        document.note = "nothing of its own: every line is the template's"
    return document


def _document(row, key, label, origin, template):
    document = Document(key, label, origin)
    if not row.pieces:
        document.note = (f"not compared: {row.status}" if row.status not in ("graded", "timeout", "memory",
                                                                              "crashed")
                         else "not compared: graded before the gradebook kept code; grade again with --regrade")
        return document
    document.pieces = [p for kind, name, text, _ in row.pieces if (p := template.own(kind, name, text)) is not None]
    if any(cut for *_, cut in row.pieces):
        document.note = "its code was cut at the gradebook's limit"
    if not document.pieces:
        document.note = "nothing of its own to compare: every line is the template's"
    return document


def _who(row):
    return row.name if row.name == row.student else f"{row.name} ({row.student})"
