"""The names LMSs pair feedback files by: Canvas's file prefix, Moodle's folder, a Classroom repository."""

from pathlib import PurePosixPath

from ..intake import identity

def _file_name(source):
    """The hand-in's own file name: the part after a zip's "name.zip:" label and any folders."""
    return PurePosixPath(source.split(":", 1)[-1] if _zip_label(source) else source).name


def _zip_label(source):
    head, sep, _ = source.partition(":")
    return bool(sep) and head.lower().endswith(".zip")


def canvas_prefix(source):
    """`lastfirst[_LATE]_userid_submissionid_` when the hand-in came from a Canvas download, else None."""
    return identity.canvas_prefix(_file_name(source))


def canvas_user_id(source):
    found = identity.canvas_file(_file_name(source))
    return found.lms_id if found else ""


def moodle_folder(source):
    """`Full Name_123_assignsubmission_file_` when the hand-in came from a Moodle download, else None.

    Only the top folder is the one Moodle wrote; a folder inside it is the student's own."""
    path = source.split(":", 1)[-1] if _zip_label(source) else source
    parts = PurePosixPath(path).parts
    return parts[0] if parts and identity.moodle_folder(parts[0]) else None


def moodle_prefix(source):
    """`Full Name_123_assignsubmission_file_` when the hand-in is a file of a Moodle download made without
    "download submissions in folders" (`Full Name_123_assignsubmission_file_n-queens.ipynb`), else None.

    Moodle's feedback-zip import (mod/assign/feedback/file/importziplib.php, is_valid_filename_for_import)
    splits each path part on `_` into at most five pieces and takes the second as the participant id: a
    feedback file named with this prefix pairs with its student as the folder does."""
    path = source.split(":", 1)[-1] if _zip_label(source) else source
    parts = PurePosixPath(path).parts
    if len(parts) != 1:
        return None
    found = identity.moodle_file(parts[0])
    return parts[0][:len(parts[0]) - len(found.original)] if found and found.original else None


def moodle_participant(source):
    """The Moodle participant id of this assignment that a download's folder or file name carries, or ""."""
    name = moodle_folder(source) or moodle_prefix(source)
    if not name:
        return ""
    found = identity.moodle_folder(name.rstrip("_")) if moodle_folder(source) else identity.moodle_file(
        _file_name(source))
    return found.lms_id if found else ""


def classroom_repository(source):
    """The repository folder a GitHub Classroom hand-in came from (`n-queens-alice/n-queens.ipynb`)."""
    path = source.split(":", 1)[-1] if _zip_label(source) else source
    parts = PurePosixPath(path).parts
    if not parts or parts[0] in ("..", ".", "/"):
        return None
    return parts[0]      # a repository with no notebook is its own source: `n-queens-bob`
