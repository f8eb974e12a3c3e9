"""The names LMSs pair feedback files by: Canvas's file prefix, Moodle's folder, a Classroom repository."""

from pathlib import PurePosixPath

from ..intake.identity import CANVAS, MOODLE

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
