"""Build the student notebook from the reference notebook, one step at a time."""

import copy
from dataclasses import dataclass, field

import nbformat

from .preprocessors.clear_outputs import clear_outputs
from .preprocessors.colab_badge import colab_badge
from .preprocessors.drop_reference_only import drop_reference_only
from .preprocessors.inline_runtime import inline_runtime
from .preprocessors.public_checks import public_checks
from .preprocessors.stub_solutions import stub_solutions


@dataclass(frozen=True)
class Context:
    assignment: object
    expected: dict
    colab_url: str
    limits: dict = field(default_factory=dict)   # case name -> the grader's time limit (s), as in the rubric


STEPS = (drop_reference_only, inline_runtime, stub_solutions, public_checks, clear_outputs, colab_badge)


def read_reference(assignment):
    return nbformat.read(assignment.solution_path, as_version=4)


def executable_reference(reference, assignment):
    """The reference as the grader runs it: helpers inlined, nothing else changed."""
    return inline_runtime(copy.deepcopy(reference), Context(assignment, {}, ""))


def build_student_notebook(reference, context):
    notebook = copy.deepcopy(reference)
    for step in STEPS:
        notebook = step(notebook, context)
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    notebook.metadata = _student_metadata(reference.metadata, context.assignment)
    nbformat.validate(notebook)
    return notebook


def _student_metadata(metadata, assignment):
    return {
        "kernelspec": metadata.get("kernelspec", {"name": "python3", "display_name": "Python 3",
                                                  "language": "python"}),
        "language_info": {"name": "python"},
        "colab": {"provenance": [], "name": assignment.notebook},
        "autograder": {"assignment": assignment.id},
    }


def notebook_text(notebook):
    return nbformat.writes(notebook) + "\n"

