"""Per-case results of an `autograder grade --out DIR` run, for the exporters.

They are read from DIR/gradebook.db by the same loader the feedback pages use
(gradebook/read.py): the hand-ins that count, and their case results.
"""

from ..gradebook.read import load_submissions


def read(out_dir, assignment):
    """The counted hand-ins of `assignment` in out_dir's gradebook."""
    return load_submissions(out_dir, assignment.id)
