"""What intake unpacked into `--out/handins` is removed once a run ends, unless the user keeps it.

Nothing after grading reads it: the gradebook keeps each hand-in's code (for
`similarity`) and every result (for `feedback`, `report`, `release`), and a
later `grade` unpacks its downloads again, so an unchanged hand-in is still
known by its hash and skipped.  Left there, it was a copy of every hand-in of
every run, and what a nested zip wrote stayed on disk (issue 38).
"""

import os
import shutil

UNPACKED = "handins"          # the folder inside --out that intake unpacks zips into


def remove_unpacked(folder):
    """Remove `folder`; returns notes for people (none when there was nothing to remove)."""
    if not os.path.lexists(folder):
        return []
    if os.path.islink(folder) or not os.path.isdir(folder):
        return [f"warning: {folder} is not a folder the grader made; it was left as it is"]
    shutil.rmtree(folder, onerror=_writable_then_again)
    if os.path.lexists(folder):
        return [f"warning: could not remove everything unpacked in {folder}: remove it by hand"]
    return [f"removed what was unpacked into {folder} (--keep-unpacked keeps it)"]


def _writable_then_again(function, path, _):
    """A folder left without write permission: give it back (it is ours), then try once more."""
    try:
        os.chmod(os.path.dirname(path), 0o700)
        function(path)
    except OSError:
        pass
