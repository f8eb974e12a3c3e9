"""`release --students`: what students may see, after a leak check.

The bundle is assignments/ (the generated student notebooks),
public_rubric.xlsx, requirements-student.txt and environment.yml (to work
locally) and a README.md for students made from
templates/student_README.md.j2 (Colab badges from course.colab_url).  Every
file is checked by leak_guard against the solutions' code and every
assignment's hidden cases before anything is written; one leak and nothing
is written at all.
"""

from dataclasses import dataclass, field
from pathlib import Path

from ..core import colab
from ..core.assignment import load_assignment
from ..core.errors import AutograderError
from ..feedback import leak_guard
from ..core.render import render
from ..feedback.write import write_if_changed

SKIPPED = {".ipynb_checkpoints", "__pycache__", ".DS_Store"}
STUDENT_ENVIRONMENT = ("requirements-student.txt", "environment.yml")


def student_readme(course):
    assignments = []
    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        notebook = f"assignments/{assignment.id}/{assignment.notebook}"
        public = sum(c.points for c in assignment.public_cases)
        assignments.append(dict(id=assignment.id, title=assignment.title, notebook=notebook,
                                colab_url=course.colab_url(notebook), public_points=f"{public:g}",
                                hidden_points=f"{assignment.max_score - public:g}"))
    return render("student_README.md.j2", course=course.name, repository=course.repository,
                  assignments=assignments, points=f"{course.points_per_assignment:g}",
                  packages=", ".join(colab.OFFERED))


def student_bundle(course):
    """{relative path: bytes} of everything students get."""
    files = {}
    folder = course.root / "assignments"
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(course.root)
        if path.is_file() and not (set(relative.parts) & SKIPPED or any(p.startswith(".") for p in relative.parts)):
            files[relative.as_posix()] = path.read_bytes()
    # The rubric, and the student environment for working locally (what Colab has).
    for name in ("public_rubric.xlsx", *STUDENT_ENVIRONMENT):
        if (course.root / name).is_file():
            files[name] = (course.root / name).read_bytes()
    files["README.md"] = student_readme(course).encode("utf-8")
    return files


@dataclass
class StudentRelease:
    written: list = field(default_factory=list)     # paths written (unchanged files are not)
    left_out: list = field(default_factory=list)    # the student environment files this course has none of


def release_students(course, target):
    """Check, then write the bundle into `target`.  A bundle without a generated file its README points to
    (a student notebook, the rubric) is refused, naming them: students would follow a dead link."""
    files = student_bundle(course)
    notebooks = [f"assignments/{a}/{load_assignment(course, a).notebook}" for a in course.assignment_ids()]
    ungenerated = [name for name in (*notebooks, "public_rubric.xlsx") if name not in files]
    if ungenerated:
        raise AutograderError(f"the student bundle would lack {', '.join(ungenerated)}, which its README names: "
                              "run `autograder build` first, then release again")
    leak_guard.check(files, leak_guard.solution_needles(course) + leak_guard.hidden_needles(course))
    target = Path(target)
    return StudentRelease([target / name for name, data in files.items() if write_if_changed(target / name, data)],
                          [name for name in STUDENT_ENVIRONMENT if name not in files])
