"""Who handed a file in, from the names LMSs give their downloads."""

import re
from pathlib import PurePosixPath

# Canvas "Download submissions": lastfirst[_LATE]_userid_submissionid_original-name
CANVAS = re.compile(r"^(?P<student>[^_/]+?)(?:_LATE)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<original>.+)$")
# Moodle "Download all submissions": Full Name_participant_assignsubmission_file_[original]
MOODLE = re.compile(r"^(?P<student>.+?)_(?P<participant>\d+)_assignsubmission_(?:file|onlinetext)_?(?P<rest>.*)$")


def student_for(relative_path, pattern=None):
    """The student a file belongs to, from its path relative to the folder given.

    `pattern` (a regular expression with a `student` group, searched in the
    path) overrides the built-in rules: Moodle folder or file names, Canvas
    file names, else the file name itself (`alice.ipynb` is alice).
    """
    path = PurePosixPath(relative_path)
    if pattern is not None:
        match = re.search(pattern, str(path))
        if match and match.group("student"):
            return match.group("student")
    for part in path.parts:
        match = MOODLE.match(part)
        if match:
            return match.group("student").strip()
    match = CANVAS.match(path.name)
    if match:
        return match.group("student")
    return path.stem


def from_lms(relative_path):
    """True when the name says an LMS made it (so a stray non-notebook is a wrong hand-in)."""
    path = PurePosixPath(relative_path)
    return bool(CANVAS.match(path.name)) or any(MOODLE.match(part) for part in path.parts)
