"""Who handed a file in, from the names LMSs give their downloads.

A student is keyed by the LMS's own id whenever the download carries one, so
two students with the same name never share a row:

  Canvas      `canvas:<user id>`          (file `smithjohn[_LATE]_111_9001_n-queens.ipynb`)
  Moodle      `moodle:<participant id>`   (folder `Jane Doe_501_assignsubmission_file_/`)
  Gradescope  `gradescope:<sid>`, else `gradescope:<email>`, else the name (submission_metadata.yml)

and the display name ("smithjohn", "Jane Doe", "Ada Lovelace") is kept beside
the key.  GitHub Classroom users, per-student folders and file names are
unique within their folder already, so they are the key as they are.
"""

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

# Canvas "Download submissions": lastfirst[_LATE]_userid_submissionid_original-name
CANVAS = re.compile(r"^(?P<student>[^_/]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<original>.+)$")
# Moodle "Download all submissions": Full Name_participant_assignsubmission_file_[original]
MOODLE = re.compile(r"^(?P<student>.+?)_(?P<participant>\d+)_assignsubmission_(?:file|onlinetext)_?(?P<rest>.*)$")
# A browser's second download of the same file: "n-queens (1).ipynb".
_DUPLICATE = re.compile(r"^(?P<stem>.+?)(?: \(\d+\))?$")


@dataclass(frozen=True)
class Identity:
    key: str                  # the gradebook's student: unique within a class
    name: str                 # for people
    lms: str = ""             # canvas, moodle, gradescope, classroom, folder, file, pattern
    lms_id: str = ""          # the LMS's own id (Canvas user id, Moodle participant, Gradescope SID)
    late_mark: bool | None = None   # the LMS's own verdict on lateness (Canvas names say _LATE), None: unknown
    email: str = ""


def plain_stem(name):
    """A file's stem without a duplicate download's " (1)"."""
    return _DUPLICATE.match(PurePosixPath(name).stem).group("stem")


def lms_identity(relative_path):
    """The Identity an LMS file or folder name carries, or None."""
    path = PurePosixPath(relative_path)
    for part in path.parts:
        match = MOODLE.match(part)
        if match:
            participant = match.group("participant")
            return Identity(f"moodle:{participant}", match.group("student").strip(), "moodle", participant)
    match = CANVAS.match(path.name)
    if match:
        user = match.group("user")
        return Identity(f"canvas:{user}", match.group("student"), "canvas", user,
                        late_mark=bool(match.group("late")))
    return None


def pattern_identity(relative_path, pattern):
    """The Identity a --student-pattern finds in the path, or None when it does not match."""
    match = re.search(pattern, str(PurePosixPath(relative_path)))
    if match and match.group("student"):
        return Identity(match.group("student"), match.group("student"), "pattern")
    return None


def student_for(relative_path, pattern=None):
    """The student key of a file, from its path relative to the folder given.

    `pattern` (a regular expression with a `student` group, searched in the
    path) overrides the built-in rules: Moodle folder or file names, Canvas
    file names, the first folder under the folder given (one folder per
    student), else the file name itself (`alice.ipynb` is alice).
    """
    return identity_for(relative_path, pattern).key


def identity_for(relative_path, pattern=None):
    path = PurePosixPath(relative_path)
    if pattern is not None:
        found = pattern_identity(path, pattern)
        if found:
            return found
    found = lms_identity(path)
    if found:
        return found
    if len(path.parts) > 1:
        return Identity(path.parts[0], path.parts[0], "folder")
    stem = plain_stem(path.name)
    return Identity(stem, stem, "file")


def from_lms(relative_path):
    """True when the name says an LMS made it (so a stray non-notebook is a wrong hand-in)."""
    return lms_identity(relative_path) is not None
