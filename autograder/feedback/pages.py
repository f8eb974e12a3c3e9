"""Every student's feedback page (HTML and Markdown), rendered and leak-checked.

`feedback`, and both kinds of release, render from the gradebook through
here, so what a student gets is the same wherever it is delivered.  A page
that would say anything about a hidden case in words the grader did not
write (leak_guard.vet_page) is withheld, and said so, rather than written.
"""

from dataclasses import dataclass, field
from pathlib import Path

from . import leak_guard
from ..gradebook.read import load_submissions
from ..core.folder_names import safe_name
from ..core.render import render
from .view import student_view
from .write import write_if_changed

HTML_NAME, MARKDOWN_NAME = "feedback.html", "feedback.md"


@dataclass(frozen=True)
class Page:
    student: str
    folder: str           # a safe folder name
    html: str
    markdown: str
    submission: object    # load.SubmissionRow

    @property
    def who(self):
        """For people: the student's name, with the key when it is not the name (`smithalice (canvas:1001)`)."""
        name = self.submission.display_name
        return name if name == self.student else f"{name} ({self.student})"


@dataclass
class Pages:
    pages: list
    withheld: dict = field(default_factory=dict)   # student -> [leak_guard.Unvetted]


def build_pages(course, assignment, out_dir):
    expected = assignment.load_expected()
    whys = leak_guard.page_whys(assignment)       # once for the class: the same for every page
    result = Pages([])
    for submission in load_submissions(out_dir, assignment.id):
        view = student_view(submission, assignment, expected, course)
        leaks = leak_guard.vet_page(view, assignment, whys)
        if leaks:
            result.withheld[submission.student] = leaks
            continue
        html = render("feedback.html.j2", **view)
        markdown = render("feedback.md.j2", **view)
        result.pages.append(Page(submission.student, feedback_folder(submission), html, markdown, submission))
    return result


def feedback_folder(submission):
    """The student's feedback folder: their name and key (`Jane_Doe_canvas_1002-5c2b1e`), or the key alone
    when it is the name; safe_name keeps it safe and, whenever it had to change a character, unique."""
    name = submission.display_name
    return safe_name(submission.student if name == submission.student else f"{name}_{submission.student}")


def write_feedback(pages, out_dir):
    """DIR/feedback/<student>/feedback.{html,md}; returns the students whose files changed."""
    changed = []
    for page in pages.pages:
        folder = Path(out_dir) / "feedback" / page.folder
        wrote = write_if_changed(folder / HTML_NAME, page.html)
        wrote = write_if_changed(folder / MARKDOWN_NAME, page.markdown) or wrote
        if wrote:
            changed.append(page.student)
    return changed
