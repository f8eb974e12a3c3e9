"""Turn the paths given to `grade` into hand-ins, each with its student.

Accepted: notebooks and .py files, folders of them, zips downloaded from an
LMS (Canvas, Moodle, a Gradescope export) and folders of GitHub Classroom
repository clones.  Every file that could be a hand-in gets a Handin, the
unusable ones with a status saying why, so nothing is silently dropped.
"""

from .collect import Handin, IntakeError, IntakeOptions, collect

__all__ = ["Handin", "IntakeError", "IntakeOptions", "collect"]
