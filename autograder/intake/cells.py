"""Read a hand-in (a notebook or a .py file) into the code cells to run, under limits.

A hand-in is untrusted bytes.  Before any JSON parser sees a notebook, a
quick scan bounds what parsing it could cost: how many objects and lists it
holds (a 45 MB file of 15 million empty objects is refused, not parsed);
json's own guard refuses one nested thousands of levels deep.  Only the cells
and metadata are kept; nbformat 2 and 3 are upgraded to 4 without their
outputs, and no schema validation walks every output again.

Anything unreadable becomes a SubmissionError whose `status` is the short
reason recorded in the gradebook.  Besides the cells, a notebook says which
assignment it is (metadata.autograder.assignment) and which language its
kernel runs: a notebook for R is not graded as Python.
"""

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import marimo
from .files import UnsafeFile, read_capped

MAX_CONTAINERS = 500_000     # JSON objects and lists; a large real notebook has tens of thousands
# Code cells of one hand-in; a long real notebook has a few hundred.  A .py hand-in is cut into cells at its `# %%`
# lines, 7 bytes a cell: a 20 MB one (150 KB zipped) made 3 million cells, 3.5 GB in the grader's process.
MAX_CELLS = 10_000
# A kernel's language as notebooks name it; anything else that is named is another language.
PYTHON_NAMES = {"python", "python3", "python2", "ipython", "ipython3", "pyspark", "python 3"}
# What `language_info` may say that names no kernel language (nbformat's own no_min_version.ipynb says
# "plaintext"): with no kernelspec, Jupyter runs such a notebook with its default kernel, Python.
NOT_A_LANGUAGE = {"plaintext", "text", "plain", "markdown", "none", "unknown", ""}
NOTE = "handed in: "          # as intake/assemble.py's notes start
# Only spaces and tabs between the words (as Python has them): `\s` would run across lines from every line's
# start, and a cell of 60,000 blank lines cost 65 s (quadratic); this is linear in the cell.
_COLAB = re.compile(r"^[ \t]*(?:from[ \t]+google\.colab\b|import[ \t]+google\.colab\b"
                    r"|from[ \t]+google[ \t]+import[ \t]+colab\b)", re.MULTILINE)
_MARIMO_IMPORT = re.compile(r"^import marimo\b", re.MULTILINE)
_MARIMO_APP = re.compile(r"^app[ \t]*=[ \t]*marimo\.App\(", re.MULTILINE)
# A `# %%` line: at the start of the text or after any line end str.splitlines knows.
_PERCENT_MARKER = re.compile("(?:^|(?<=[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]))# %%")


class SubmissionError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class CodeCell:
    source: str
    tags: tuple = ()


@dataclass(frozen=True)
class Notebook:
    """What grading needs from a hand-in: its code cells, and what its metadata says."""
    cells: tuple
    assignment: str | None = None      # metadata.autograder.assignment, when the build wrote it
    language: str | None = None        # the kernel's language, when the notebook names one
    notes: tuple = field(default=())   # what was decided in reading it, for people ("handed in: ...")
    uses_colab: bool = False           # a cell imports google.colab (a stand-in when graded)


def read_cells(path):
    """The code cells of the hand-in at `path` (SubmissionError when there are none to run)."""
    return read_notebook(path).cells


def read_notebook(path):
    path = Path(path)
    try:
        raw = read_capped(path)       # a regular file, capped: never /dev/zero or a link out of the hand-in
    except UnsafeFile as error:
        raise SubmissionError(error.status, str(error)) from None
    return parse(raw, path.name)


def parse(raw, name):
    """The Notebook in `raw` (a notebook's or a .py file's bytes); `name` is for messages and the file type.

    Raises SubmissionError and nothing else, whatever the bytes: a failure of any reader on a hand-in is that
    hand-in's row, never the end of the class run (tests/intake/test_fuzz_readers.py holds it)."""
    try:
        return _parse(raw, name)
    except SubmissionError:
        raise
    except (RecursionError, MemoryError) as error:
        raise SubmissionError("invalid-notebook", f"{name} is too deeply nested or too large to read "
                                                  f"({type(error).__name__})") from None
    except Exception as error:  # noqa: BLE001 - whatever a reader raises on a hand-in is that hand-in's row
        raise SubmissionError("invalid-notebook", f"{name} could not be read ({type(error).__name__}: "
                                                  f"{str(error)[:100]})") from None


def _parse(raw, name):
    notes = ()
    raw, notes = _from_utf16(raw, name)
    stripped = raw.rstrip(b"\x00")
    if len(stripped) < len(raw):
        # A sync client or a save cut short leaves a file padded with NUL bytes after its last byte: what
        # comes before them is the notebook, if it is one; the row says what was cut off.
        notes += (f"{NOTE}{name} ended in {len(raw) - len(stripped):,} NUL bytes (written by a sync client or a "
                 "save cut short), which were left out: the notebook before them was graded",)
        raw = stripped
    if not raw.strip():
        raise SubmissionError("empty", f"{name} is empty" + (" (nothing but NUL bytes)" if notes else ""))
    if b"\x00" in raw:
        at = raw.index(b"\x00")
        raise SubmissionError("invalid-notebook", f"{name} holds NUL bytes (the first at byte {at:,}): a file "
                                                  "damaged in saving or copying, not a notebook; download it again")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SubmissionError("invalid-notebook", f"{name} is not UTF-8 text") from None
    if name.lower().endswith(".py"):
        if _is_marimo(text):
            cells, notes = _marimo_cells(text, name), notes + (
                f"{NOTE}{name} is a marimo notebook: its cells were run top to bottom in the file's order, as a "
                "Jupyter notebook's are (marimo itself runs them in the order their names need)",)
        else:
            cells = _py_cells(text, name)
        if not any(c.source.strip() for c in cells):
            raise SubmissionError("empty", f"{name} has no code")
        return Notebook(tuple(cells), notes=notes, uses_colab=_uses_colab(cells))
    notebook = _notebook(raw, text, name)
    return Notebook(notebook.cells, notebook.assignment, notebook.language, notes,
                    _uses_colab(notebook.cells))


def _notebook(raw, text, name):
    _check_size(raw, name)
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise SubmissionError("invalid-notebook", f"{name} is not a notebook ({_not_json_because(text)})") from None
    except RecursionError:        # json's own depth guard: no notebook nests a thousand levels
        raise SubmissionError("invalid-notebook", f"{name} nests too deeply to be a notebook") from None
    except ValueError:            # Python's own guard: an integer of more than 4,300 digits, whose reading is quadratic
        raise SubmissionError("invalid-notebook", f"{name} is not a notebook (it holds a number of more than "
                                                  f"{sys.get_int_max_str_digits():,} digits)") from None
    if not isinstance(data, dict):
        raise SubmissionError("invalid-notebook", f"{name} is not a notebook (its JSON is not an object)")
    major = data.get("nbformat")
    if type(major) is not int or not 2 <= major <= 4:
        raise SubmissionError("invalid-notebook", f"{name} is not a notebook nbformat knows "
                                                  f"(nbformat {str(major)[:20]!r})")
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    cells = data.get("cells") if major == 4 else _upgraded_cells(data, name)
    language = _language(metadata)
    if language is not None and language.lower() not in PYTHON_NAMES:
        raise SubmissionError("wrong-language", f"{name} is a notebook for {language[:40]} (its kernel's "
                                                "language), not Python: nothing in it was run")
    cells = _code_cells(cells, name)
    if not any(c.source.strip() for c in cells):
        raise SubmissionError("empty", f"{name} has no code")
    named = metadata.get("autograder", {}).get("assignment") if isinstance(metadata.get("autograder"),
                                                                            dict) else None
    return Notebook(tuple(cells), named if isinstance(named, str) and named else None, language)


_UTF16_BOMS = ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_LFS_POINTER = "version https://git-lfs.github.com/spec/v1"
_CONFLICT_LINES = ("<<<<<<< ", "=======", ">>>>>>> ")   # in this order, each at the start of a line


def _from_utf16(raw, name):
    """(the bytes as UTF-8, notes): a notebook saved as UTF-16 with its byte order mark, as Windows PowerShell
    5.1's `>` and `Out-File` write one, is the same notebook; anything else is left as it is."""
    for bom, codec in _UTF16_BOMS:
        if raw.startswith(bom) and not raw.startswith(b"\xff\xfe\x00\x00"):     # (that one is UTF-32)
            try:
                text = raw[len(bom):].decode(codec)
            except UnicodeDecodeError:
                return raw, ()            # not UTF-16 after all: judged as the bytes it is
            return text.encode("utf-8", "surrogatepass"), (
                f"{NOTE}{name} was saved as UTF-16 (as Windows PowerShell 5.1's `>` writes a file), not UTF-8 as "
                "Jupyter saves notebooks: it was read as UTF-16",)
    return raw, ()


def _not_json_because(text):
    """Why a hand-in that is not JSON is not a notebook, in the words that say what it is, when that is certain."""
    start = text.lstrip()[:200].lower()
    if start.startswith(("<!doctype html", "<html")):
        return ("it is a web page (HTML): the page that shows the notebook, saved from the browser, not the "
                "notebook itself. On GitHub use the *Download raw file* button; in Colab, File → Download → "
                "Download .ipynb")
    if text.lstrip().startswith(_LFS_POINTER):
        return ("it is a Git LFS pointer, the few lines git keeps in place of a large file: the notebook itself is "
                "in the repository's LFS storage. Run `git lfs pull` (or use GitHub's *Download raw file* button) "
                "and hand in the file it gives")
    if _has_conflict(text):
        return ("it holds git's merge-conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`), left from a merge or a "
                "pull that was never resolved. Keep one side of each conflict (or take the notebook again from "
                "Colab), check that it opens in Jupyter, and hand it in again")
    return "not valid JSON"


def _has_conflict(text):
    """Does `text` hold a merge conflict: `<<<<<<< `, `=======` and `>>>>>>> ` lines, in that order?  (One pass.)"""
    wanted = 0
    for line in text.splitlines():
        if line.startswith(_CONFLICT_LINES[wanted]) and (wanted != 1 or line.rstrip() == "======="):
            wanted += 1
            if wanted == len(_CONFLICT_LINES):
                return True
    return False


def _upgraded_cells(data, name):
    """The cells of an nbformat 2 or 3 notebook, as nbformat 4 has them (outputs left out: never needed)."""
    try:
        worksheets = [{**sheet, "cells": [{**cell, "outputs": []} if "outputs" in cell else cell
                                           for cell in sheet.get("cells", []) if isinstance(cell, dict)]}
                      for sheet in data.get("worksheets", []) if isinstance(sheet, dict)]
        # Each version's own reader first: it joins the line lists every real v2/v3 file holds
        # ("input": ["line\n", ...]), which convert() alone cannot split.
        old = nbformat.versions[data["nbformat"]].to_notebook_json({**data, "worksheets": worksheets})
        upgraded = nbformat.convert(old, 4)
        return upgraded.get("cells")
    except RecursionError:
        raise SubmissionError("invalid-notebook", f"{name} nests too deeply to be a notebook") from None
    except Exception as error:  # noqa: BLE001 - nbformat's converters raise many kinds for malformed input
        raise SubmissionError("invalid-notebook", f"{name} is an old notebook nbformat cannot read "
                                                  f"({type(error).__name__})") from None


def _check_size(raw, name):
    """Refuse, before parsing, a notebook whose JSON holds more objects and lists than any notebook does.

    Parsing 15 million empty objects takes gigabytes; counting the brackets
    outside strings takes a few vectorised passes over the bytes.  (A bracket is
    outside a string when an even number of unescaped quotes precede it.)
    """
    if raw.count(b"{") + raw.count(b"[") <= MAX_CONTAINERS:
        return                    # cannot be over, whatever is in strings
    import numpy                  # here, not at the top: only such a file needs it, and every grader start paid it
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    codes = numpy.frombuffer(plain, dtype=numpy.uint8)
    inside = numpy.logical_xor.accumulate(codes == ord('"'))
    containers = int(numpy.count_nonzero(((codes == ord("{")) | (codes == ord("["))) & ~inside))
    if containers > MAX_CONTAINERS:
        raise SubmissionError("invalid-notebook", f"{name} holds {containers:,} JSON objects and lists; a "
                                                  f"notebook is refused above {MAX_CONTAINERS:,}")


def _language(metadata):
    """The language the notebook's kernel runs: its kernelspec's, else what language_info names (the last
    kernel's report), unless that names no language (`plaintext`): Jupyter then runs it in Python."""
    kernel, info = metadata.get("kernelspec"), metadata.get("language_info")
    if isinstance(kernel, dict) and isinstance(kernel.get("language"), str) and kernel["language"].strip():
        return kernel["language"].strip()
    if isinstance(info, dict) and isinstance(info.get("name"), str) and \
            info["name"].strip().lower() not in NOT_A_LANGUAGE:
        return info["name"].strip()
    return None


def _uses_colab(cells):
    return any(_COLAB.search(cell.source) for cell in cells)


def _is_marimo(text):
    """marimo's file format: `import marimo`, `app = marimo.App(...)` and cells as `@app.cell` functions."""
    return bool(_MARIMO_IMPORT.search(text) and _MARIMO_APP.search(text))


def _marimo_cells(text, name):
    """Each `@app.cell` function's body (its closing `return` left out), `@app.function` and `@app.class_definition`
    definitions whole, and `with app.setup:` bodies, in the file's order.  The file is parsed, never run, in a
    child process with a CPU budget (marimo.py)."""
    try:
        sources = marimo.cell_sources(text, name)
    except marimo.MarimoError as error:
        raise SubmissionError("invalid-notebook", str(error)) from None
    if len(sources) > MAX_CELLS:
        raise _too_many_cells(name)
    return [CodeCell(source) for source in sources]


def _too_many_cells(name):
    return SubmissionError("invalid-notebook", f"{name} holds more than {MAX_CELLS:,} code cells; a hand-in is "
                                               "refused above that (a long notebook has a few hundred)")


def _code_cells(raw_cells, name):
    if not isinstance(raw_cells, list):
        raise SubmissionError("invalid-notebook", f"{name} is not a notebook (it has no list of cells)")
    cells = []
    for cell in raw_cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        if len(cells) == MAX_CELLS:
            raise _too_many_cells(name)
        source = cell.get("source", "")
        source = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
        metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        tags = metadata.get("tags") if isinstance(metadata.get("tags"), list) else []
        cells.append(CodeCell(source, tuple(t for t in tags if isinstance(t, str))))
    return cells


DATABRICKS_HEADER = "# Databricks notebook source"
DATABRICKS_SPLIT = "# COMMAND ----------"


def _py_cells(text, name=""):
    """Cells of a .py hand-in: Databricks' `# COMMAND ----------` or Jupytext / VS Code's `# %%` markers.  Their
    number is counted before any is made (each marker may make one), and more than MAX_CELLS is refused."""
    if text.lstrip("\ufeff").startswith(DATABRICKS_HEADER):
        if text.count(DATABRICKS_SPLIT) >= MAX_CELLS and \
                sum(1 for chunk in _pieces(text, DATABRICKS_SPLIT) if chunk.strip()) > MAX_CELLS:
            raise _too_many_cells(name)
        return _databricks_cells(text)
    if text.count("# %%") >= MAX_CELLS and sum(1 for _ in zip(range(MAX_CELLS + 1),
                                                               _PERCENT_MARKER.finditer(text))) > MAX_CELLS:
        raise _too_many_cells(name)
    chunks, current = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("# %%") and current:
            chunks.append("".join(current))
            current = []
        current.append(line)
    chunks.append("".join(current))
    return [CodeCell(chunk) for chunk in chunks if chunk.strip()]


def _pieces(text, separator):
    """text.split(separator), one piece at a time (a list of millions of them is what the count avoids)."""
    start = 0
    while (end := text.find(separator, start)) >= 0:
        yield text[start:end]
        start = end + len(separator)
    yield text[start:]


def _databricks_cells(text):
    """A Databricks source export: Python cells between separators; `# MAGIC` cells run only as %python."""
    cells = []
    for chunk in text.split(DATABRICKS_SPLIT):
        lines = [line for line in chunk.splitlines(keepends=True) if line.strip() != DATABRICKS_HEADER]
        magic = [line for line in lines if line.strip()]
        if magic and all(line.startswith("# MAGIC") for line in magic):
            body = [line[len("# MAGIC"):].removeprefix(" ") for line in lines if line.startswith("# MAGIC")]
            if not body or body[0].strip() != "%python":
                continue                # %md, %sql, %sh, %scala ...: not Python, not run (Databricks' own choice)
            lines = body[1:]
        source = "".join(lines).strip("\n")
        if source.strip():
            cells.append(CodeCell(source + "\n"))
    return cells
