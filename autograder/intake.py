"""Find the hand-ins among the paths given to `grade`, and whose each one is.

A plain file `alice.ipynb` (or `alice.py`) belongs to `alice`; a folder is
searched for notebooks and .py files.  Every file found gets a row, even one
that turns out unreadable.
"""

from dataclasses import dataclass
from pathlib import Path

SUFFIXES = (".ipynb", ".py")
IGNORED_PARTS = {".ipynb_checkpoints", "__pycache__", ".git", "__MACOSX"}


class IntakeError(Exception):
    """A path given on the command line does not exist."""


@dataclass(frozen=True)
class Handin:
    student: str
    path: Path


def find_handins(paths):
    handins = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES
                           and not IGNORED_PARTS & set(p.relative_to(path).parts))
        elif path.is_file():
            files = [path]
        else:
            raise IntakeError(f"{raw}: no such file or folder")
        handins += [Handin(student_from_name(p), p) for p in files]
    return handins


def student_from_name(path):
    return Path(path).stem
