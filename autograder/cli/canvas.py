"""`autograder canvas pull`: the roster, an assignment's submissions and its due-date overrides, from Canvas's API."""

from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..core.assignment import load_assignment
from ..core.listing import names
from ..gradebook.lock import GradebookBusy
from ..grade.refresh import changing, refresh
from ..intake.canvas_api import Connection
from ..intake.canvas_pull import PullEvents
from ..roster.canvas_roster import pull
from ..roster.store import CourseRecords
from .options import grading_course
from .output import NORMAL, say

console = Console(stderr=True)


@click.group("canvas")
def canvas_group():
    """Canvas's own record, through its API (canvas_url and canvas_course in course.toml; the token in
    CANVAS_API_TOKEN or the system keyring).  Grades go back with `release --to canvas`."""


@canvas_group.command("pull")
@click.option("--assignment", "assignment_id", required=True, help="Assignment id, e.g. n-queens.")
@click.option("--to", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The folder for the submissions (default: grades/canvas/<assignment>); `grade` reads it.")
@click.pass_obj
def pull_command(course_root, assignment_id, folder):
    """Bring in the roster (enrollments, the Test Student flagged), the assignment's submissions (every file
    handed in, each with Canvas's submitted_at and attempt), its due-date overrides (as extensions) and the
    students Canvas excuses (as excuses).  A second pull fetches only what changed."""
    course = grading_course(course_root)
    assignment = load_assignment(course, assignment_id)
    folder = folder or course.grades_root / "canvas" / assignment.id
    connection = Connection.of(course)
    with CourseRecords.of(course) as records:
        report = pull(course, assignment, folder, connection, records, _Bar())
        who = {s.key: s.who for s in records.students(include_off_roster=True)}
        applied = _apply(course, assignment, records)
    _say_roster(report, who)
    _say_submissions(report.pulled, who)
    for key, until, why in report.extensions:
        say(f"extension from Canvas: {who.get(key, key)} until {until} ({why})")
    if report.excused:
        click.echo(f"excused in Canvas, so excused here (`autograder excuse --list` shows them): "
                   f"{names([who.get(k, k) for k in report.excused])}")
    if report.unexcused:
        click.echo(f"no longer excused in Canvas, so their excuse here is withdrawn: "
                   f"{names([who.get(k, k) for k in report.unexcused])}")
    if applied:
        say(applied, err=True)
    for note in report.notes:
        click.echo(note if note.startswith("warning: ") else f"note: {note}", err=note.startswith("warning: "))
    click.echo(f"wrote {folder} ({connection.pacing.requests} request(s) to Canvas); grade it with:")
    click.echo(f"  autograder grade --assignment {assignment.id} --out {_shown(course.grades_dir(assignment.id))} "
               f"{_shown(folder)}")


def _apply(course, assignment, records):
    """What the pull changed of the assignment's records (Canvas's overrides and excuses) applied at once to its
    gradebook when it is graded, as `autograder extend` and `autograder excuse` apply theirs; a note."""
    try:
        with changing(course, [assignment.id]):
            done = refresh(course, assignment, records)
    except GradebookBusy as busy:
        return f"note: not applied to {assignment.id}'s gradebook yet ({busy}): the next command that reads it does"
    return f"applied to {done.out_dir / 'grades.csv'}" if done else ""


def _shown(path):
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _say_roster(report, who):
    click.echo(f"roster: {report.roster.kind}: {len(report.added)} student(s) added, {len(report.updated)} updated"
               + (f", {len(report.left)} no longer listed (kept, marked so)" if report.left else ""))
    tests = [entry.name for entry in report.roster.entries if entry.test_student]
    if tests:
        say(f"test account(s) flagged, left out of grades and statistics: {names(tests)}", NORMAL)
    if report.left:
        click.echo(f"warning: no longer enrolled in Canvas: {names([who.get(k, k) for k in report.left])}", err=True)


def _say_submissions(pulled, who):
    records = pulled.submissions.values()
    handed = [r for r in records if r["submitted_at"]]
    late = [r for r in handed if r["late"]]
    missing = [who.get(f"canvas:{r['user_id']}", r["user_id"]) for r in records if r["missing"]]
    click.echo(f"{pulled.assignment['name']}: {len(handed)} of {len(pulled.submissions)} student(s) handed in "
               f"({len(late)} late by Canvas's clock); {len(pulled.downloaded)} file(s) fetched, "
               f"{len(pulled.kept)} already here" + (f", {len(pulled.removed)} of replaced attempts removed"
                                                     if pulled.removed else ""))
    if missing:
        say(f"missing in Canvas: {names(missing)}")
    for user, why in pulled.refused:
        click.echo(f"warning: not fetched for {who.get(f'canvas:{user}', user)}: {why}", err=True)


class _Bar(PullEvents):
    """A progress bar while files download (on a terminal)."""

    def downloading(self, total):
        if not console.is_terminal or not total:
            return super().downloading(total)
        self.bar = Progress(TextColumn("downloading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console, transient=True)
        self.task = self.bar.add_task("downloading", total=total)
        return self.bar

    def fetched(self, name):
        if getattr(self, "bar", None) is not None:
            self.bar.advance(self.task)
