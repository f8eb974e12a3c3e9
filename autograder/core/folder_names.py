"""Safe file and folder names for students.

Student names come from LMS downloads ("Alice Smith", "smithalice",
Gradescope's full names, anything a --student-pattern matched): a folder name
keeps only ASCII letters, digits, '.', '_' and '-'; whenever that changed the
name, a short hash of the real name is appended so two students never share
a folder ("Alice Smith" -> "Alice_Smith-5c2b1e").
"""

import hashlib
import re
import unicodedata

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
