"""Safe file and folder names for students, and the names LMSs pair files by.

Student names come from LMS downloads ("Alice Smith", "smithalice",
Gradescope's full names, anything a --student-pattern matched): a folder name
keeps only ASCII letters, digits, '.', '_' and '-'; whenever that changed the
name, a short hash of the real name is appended so two students never share
a folder ("Alice Smith" -> "Alice_Smith-5c2b1e").
"""

import hashlib
import re
import unicodedata
from pathlib import PurePosixPath

from ..intake.identity import CANVAS, MOODLE

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}
MAX_LENGTH = 60


def safe_name(student):
    ascii_name = unicodedata.normalize("NFKD", student).encode("ascii", "ignore").decode("ascii")
    slug = _UNSAFE.sub("_", ascii_name).strip("._-")[:MAX_LENGTH].rstrip("._-")
    if slug == student and slug.upper() not in _RESERVED:
        return slug
    digest = hashlib.sha256(student.encode("utf-8")).hexdigest()[:6]
    return f"{slug or 'student'}-{digest}"


def _file_name(source):
    """The hand-in's own file name: the part after a zip's "name.zip:" label and any folders."""
    return PurePosixPath(source.split(":", 1)[-1] if _zip_label(source) else source).name


def _zip_label(source):
    head, sep, _ = source.partition(":")
    return bool(sep) and head.lower().endswith(".zip")


def canvas_prefix(source):
    """`lastfirst[_LATE]_userid_submissionid_` when the hand-in came from a Canvas download, else None."""
    match = CANVAS.match(_file_name(source))
    return match.string[:match.start("original")] if match else None


def canvas_user_id(source):
    match = CANVAS.match(_file_name(source))
    return match.group("user") if match else ""


def moodle_folder(source):
    """`Full Name_123_assignsubmission_file_` when the hand-in came from a Moodle download, else None."""
    path = source.split(":", 1)[-1] if _zip_label(source) else source
    for part in PurePosixPath(path).parts:
        if MOODLE.match(part):
            return part
    return None


def classroom_repository(source):
    """The repository folder a GitHub Classroom hand-in came from (`n-queens-alice/n-queens.ipynb`)."""
    path = source.split(":", 1)[-1] if _zip_label(source) else source
    parts = PurePosixPath(path).parts
    if not parts or parts[0] in ("..", ".", "/"):
        return None
    return parts[0]      # a repository with no notebook is its own source: `n-queens-bob`
