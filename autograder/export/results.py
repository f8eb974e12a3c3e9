"""Per-case results of an `autograder grade --out DIR` run, for the exporters.

They are read from DIR/gradebook.db by the same loader the feedback pages use
(feedback/load.py): the hand-ins that count, and their case results.
"""

from ..feedback.load import load_submissions


def read(out_dir, assignment):
    """The counted hand-ins of `assignment` in out_dir's gradebook."""
    return load_submissions(out_dir, assignment.id)
