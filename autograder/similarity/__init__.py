"""`autograder similarity`: how much code each pair of students' hand-ins have in common.

A stage of its own, after grading: it reads the code the gradebook kept
(gradebook/code.py), leaves out the template every student starts from
(documents.py), fingerprints what is left with copydetect's winnowing
(fingerprints.py), ranks every pair, rare code weighing more (ranking.py),
and writes similarity.html or JSON (report.py).  It decides nothing, and no
student-facing stage reads it.  docs/integrity.md says what it shows and
what it does not.
"""

import time

from .documents import SimilarityError, Template, against_documents, class_documents
from .ranking import clusters, rank_pairs, weights
from .report import NO_VERDICT, SimilarityResult, write_page

__all__ = ["NO_VERDICT", "SimilarityError", "SimilarityResult", "compare_class", "write_page"]

DEFAULT_THRESHOLD = 0.8     # the line on the page: pairs above it share most of their own code
DEFAULT_TOP = 50            # pairs shown side by side (the page's look-up finds any other)


def compare_class(assignment, out_dir, against=(), threshold=DEFAULT_THRESHOLD, top=DEFAULT_TOP):
    """Compare every pair of the class in the gradebook at `out_dir`, and each student with `against`."""
    started = time.monotonic()
    template = Template(assignment)
    documents = class_documents(out_dir, assignment, template)
    if not documents:
        raise SimilarityError(f"{out_dir}: no hand-ins of {assignment.id} in the gradebook")
    documents += against_documents(against, assignment, template)
    compared = [d for d in documents if d.pieces]
    weight = weights(compared)

    def counted(i, j):      # a pair counts when one side at least is of this class
        return documents[i].origin == "class" or documents[j].origin == "class"

    pairs = rank_pairs(documents, weight, counted)
    return SimilarityResult(assignment, documents, pairs, clusters(pairs, threshold), threshold,
                            min(top, len(pairs)), weight, time.monotonic() - started)
