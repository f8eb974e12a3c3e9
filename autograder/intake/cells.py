"""Read a hand-in (a notebook or a .py file) into the code cells to run.

Anything unreadable becomes a SubmissionError whose `status` is the short
reason recorded in the gradebook.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .files import UnsafeFile, read_capped


class SubmissionError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class CodeCell:
    source: str
    tags: tuple = ()


def read_cells(path):
    path = Path(path)
    try:
        raw = read_capped(path)       # a regular file, capped: never /dev/zero or a link out of the hand-in
    except UnsafeFile as error:
        raise SubmissionError(error.status, str(error)) from None
    if not raw.strip():
        raise SubmissionError("empty", f"{path.name} is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SubmissionError("invalid-notebook", f"{path.name} is not UTF-8 text") from None
    if path.suffix == ".py":
        return _py_cells(text)
    return _notebook_cells(text, path.name)


def _notebook_cells(text, name):
    try:
        notebook = nbformat.reads(text, as_version=4)  # converts nbformat 3 as well
    except (json.JSONDecodeError, nbformat.reader.NotJSONError):
        raise SubmissionError("invalid-notebook", f"{name} is not a notebook (not valid JSON)") from None
    except Exception as error:  # noqa: BLE001 - nbformat raises many kinds
        raise SubmissionError("invalid-notebook", f"{name} is not a readable notebook: {error}") from None
    cells = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        tags = cell.get("metadata", {}).get("tags", [])
        cells.append(CodeCell(source, tuple(t for t in tags if isinstance(t, str))))
    if not any(c.source.strip() for c in cells):
        raise SubmissionError("empty", f"{name} has no code")
    return cells


def _py_cells(text):
    # Jupytext / VS Code style "# %%" markers split a script into cells.
    chunks, current = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("# %%") and current:
            chunks.append("".join(current))
            current = []
        current.append(line)
    chunks.append("".join(current))
    return [CodeCell(chunk) for chunk in chunks if chunk.strip()]
