"""`autograder grade`: grade a class, showing what runs, then the table and what was decided."""

import os
import sys
import threading

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..core.assignment import load_assignment
from ..core.course import LATE_POLICIES
from ..core.listing import names
from ..engine import LAYERS, MAX_SLOTS
from ..grade.class_run import GradeEvents, GradeOptions, GradingInterrupted, command_line, grade_class
from ..gradebook.store import NOT_GRADED, late_word
from .numbers import FACTOR, POINTS, SECONDS
from .options import grading_course
from .output import JSON, NORMAL, emit_json, say, verbosity

console = Console(stderr=True)


@click.command("grade")
@click.option("--assignment", "assignment_id", required=True, help="Assignment id, e.g. n-queens.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for gradebook.db and grades.csv (and, while it grades, unpacked archives).")
@click.option("--jobs", type=click.IntRange(1, MAX_SLOTS), default=None,
              help="Hand-ins graded at once (default: the number of cores).")
@click.option("--timeout", "case_timeout", type=SECONDS, default=None,
              help="CPU seconds per case, for every case (default: each case's limit from the reference's timing).")
@click.option("--submission-timeout", type=SECONDS, default=None,
              help="Seconds for a whole hand-in (default: the assignment's submission_timeout).")
@click.option("--limit-floor", type=SECONDS, default=None,
              help="Shortest case limit in CPU seconds, for this run (default: cases.toml's limit_floor).")
@click.option("--limit-factor", type=FACTOR, default=None,
              help="A case's limit as a multiple of the reference's time, for this run "
                   "(default: cases.toml's limit_factor).")
@click.option("--memory", "memory_mb", type=click.IntRange(min=64), default=2048, show_default=True,
              help="Memory limit in MB for each process a hand-in runs.")
@click.option("--regrade", is_flag=True, help="Grade again even hand-ins already in the gradebook.")
@click.option("--student-pattern", default=None, metavar="REGEX",
              help="Regular expression with a `student` group, searched in each file's path, "
                   "to name the student (overrides the built-in name rules).")
@click.option("--classroom-prefix", default=None, metavar="PREFIX",
              help="Prefix of GitHub Classroom repository names (default: '<assignment>-').")
@click.option("--deadline", default=None, metavar="ISO-TIME",
              help="Deadline with its UTC offset, e.g. 2026-12-01T23:59:00-05:00 (default: course.toml's).")
@click.option("--late-policy", type=click.Choice(LATE_POLICIES), default=None,
              help="none: record lateness only; per-day: --late-penalty points off per started day; "
                   "cap: at most --late-cap points (default: course.toml's, else none).")
@click.option("--late-penalty", type=POINTS, default=None, help="Points off per started day late.")
@click.option("--late-cap", type=POINTS, default=None, help="Most points a late hand-in earns.")
@click.option("--times", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="When each student handed in: Moodle's grading worksheet, or a CSV with a student and a "
                   "submitted_at column (LMS downloads carry no hand-in times).")
@click.option("--merge", is_flag=True,
              help="Add these hand-ins to an --out that holds another class's grades (refused otherwise).")
@click.option("--student", default=None, metavar="WHO",
              help="Grade only this student's hand-ins (roster key, id, email or name): with --regrade, a regrade "
                   "request.")
@click.option("--all-submissions", is_flag=True,
              help="Run every submission of a student, not only the one that counts (the newest): older ones "
                   "are otherwise recorded as superseded, not run.")
@click.option("--keep-unpacked", is_flag=True,
              help="Keep what was unpacked from zips in --out/handins after grading (removed otherwise).")
@click.option("--no-roster", "roster", flag_value=False, default=True,
              help="Do not match hand-ins to the course's roster (grading a class from elsewhere).")
@JSON
@click.option("--isolation", type=click.Choice(["auto", *LAYERS]), default="auto", show_default=True,
              help="How hand-ins are shut in: the strongest layer that works here, or one by name. "
                   "'none' (no protection) is never picked by itself.")
@click.argument("paths", nargs=-1, required=True)
@click.pass_obj
def grade_command(course_root, assignment_id, out_dir, paths, as_json, **flags):
    """Grade hand-ins: notebooks, .py files, folders, LMS zips or Classroom repository clones."""
    course = grading_course(course_root)
    assignment = load_assignment(course, assignment_id)
    options = GradeOptions(**flags, command=command_line(sys.argv[1:]))
    try:
        run = grade_class(course, assignment, paths, out_dir, options, _ConsoleEvents(assignment.id))
    except GradingInterrupted as stopped:
        click.echo(stopped.advice(), err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)   # hand-ins still running are the sandbox's, already stopped; do not wait for their threads
    if as_json:
        emit_json(_as_json(run))
        return
    if verbosity() >= NORMAL:
        _print_table(run.rows)
    _print_summary(run)


def _as_json(run):
    return {"assignment": run.assignment_id, "graded": run.graded, "skipped": run.skipped, "ignored": run.ignored,
            "isolation": run.isolation, "notes": run.notes, "grades_csv": str(run.csv_path),
            "gradebook": str(run.gradebook_path),
            "missing": [{"student": s, "name": n, "deadline": d} for s, n, status, d in run.absent
                        if status == "missing"],
            "not_yet": [{"student": s, "name": n, "deadline": d} for s, n, status, d in run.absent
                        if status == "not-yet"],
            # A hand-in not graded yet has no score: null, never 0.
            "rows": [{**row.__dict__, "score": None if row.status == NOT_GRADED else row.score} for row in run.rows]}


def _absent_notes(absent):
    """What the run says of the roster students with no hand-in: missing, not yet due, excused."""
    said = {status: [f"{name} ({student})" for student, name, state, _ in absent if state == status]
            for status in ("missing", "not-yet", "excused")}
    notes = []
    if said["missing"]:
        notes.append(f"{len(said['missing'])} on the roster handed in nothing by their deadline (missing, 0 points): "
                     + names(said["missing"]))
    if said["not-yet"]:
        notes.append(f"{len(said['not-yet'])} have not handed in and their deadline has not passed (not-yet): "
                     + names(said["not-yet"]))
    if said["excused"]:
        notes.append(f"{len(said['excused'])} excused, in no mean or total (`autograder excuse --list`; a late "
                     "joiner is excused from what was due before): " + names(said["excused"]))
    return notes


def _print_summary(run):
    notes = [f"graded {run.graded} hand-in(s)"]
    if run.skipped:
        notes.append(f"{run.skipped} unchanged since an earlier run (use --regrade to grade them again)")
    if run.other_students:
        notes.append(f"{run.other_students} hand-in(s) of other students left as they were (--student)")
    if run.graded_apart:
        notes.append("warning: the class is now scored with different cases, expected values or limits (they "
                     "changed since the others were graded?): `release` and `gradebook` refuse until `grade` runs "
                     "without --student, on every download of the class; graded apart from most: "
                     + ", ".join(name for _, name in run.graded_apart[:8])
                     + (" ..." if len(run.graded_apart) > 8 else ""))
    if run.ignored:
        notes.append(f"ignored {len(run.ignored)} file(s) that are not hand-ins: "
                     + ", ".join(run.ignored[:5]) + (" ..." if len(run.ignored) > 5 else ""))
    notes += _absent_notes(run.absent)
    if run.retimed:
        notes.append(f"{run.retimed} hand-in(s) graded earlier took their time from --times (no regrade needed)")
    click.echo("; ".join(notes))
    _warn_of_rows_to_look_at(run)
    say(_lateness_summary(run.rules, run.late, run.unknown_lateness))
    if run.other_assignments:
        click.echo(f"note: {run.gradebook_path} also holds {', '.join(run.other_assignments)}; grades.csv has "
                   f"{run.assignment_id} only")
    click.echo(f"wrote {run.csv_path} and {run.gradebook_path}")
    if run.course_folder is not None:
        click.echo(f"note: {run.gradebook_path.parent} is not the course's gradebook for {run.assignment_id} "
                   f"({run.course_folder}): the course's grades, `gradebook`, `extend`, `adjust` and `release` of the "
                   "course are not affected by this run")
    if run.wrong_assignment:
        click.echo(f"warning: {run.wrong_assignment}")


def _warn_of_rows_to_look_at(run):
    """Said even with --quiet: hand-ins still waiting, and students whose counted hand-in no time chose."""
    if run.not_graded:
        waiting = names([_person(student, name) for student, name, _ in run.not_graded])
        click.echo(f"warning: {len(run.not_graded)} hand-in(s) that an earlier, stopped run set out to grade are "
                   f"still not graded (this run did not grade them): {waiting}; give their files to `grade` again "
                   "(release and gradebook refuse until then)", err=True)
    unknown = [_person(r.student, r.name) for r in run.rows if (r.message or "").startswith("order unknown")]
    if unknown:
        click.echo(f"warning: {len(unknown)} student(s) with hand-ins from several downloads that no LMS time or "
                   "order puts in order: the one given to `grade` later counts, never the better one (each row "
                   f"says so): {names(unknown)}", err=True)


def _lateness_summary(rules, late, unknown):
    head = f"lateness: {rules.describe()}"
    if unknown and rules.deadline is None:
        head += (f"; {unknown} hand-in(s) not judged (set a deadline in course.toml's [assignment.<id>] table "
                 "or with --deadline)")
    if not late:
        return head + "; no hand-in was found late"
    lines = [f"{head}; {len(late)} late:"]
    lines += [f"  {name} ({student}): {note}" if name != student else f"  {student}: {note}"
              for student, name, note in late]
    return "\n".join(lines)


def _print_table(rows):
    table = Table(title="Grades")
    # A key is what a TA types back (`--student canvas:2003`): never cut (at 80 columns rich cut every key to
    # `canvas:2…`); the note gives way first, then the name.
    table.add_column("student", no_wrap=True, min_width=min(max((len(r.student) for r in rows), default=7), 24))
    table.add_column("name", ratio=1, min_width=8)
    for column in ("score", "status", "late", "hand-ins"):
        table.add_column(column, no_wrap=column != "status")
    table.add_column("note", ratio=2, min_width=10)
    for row in rows:
        score = "" if row.status == NOT_GRADED else f"{row.score:g} / {row.max_score:g}"
        table.add_row(escape(row.student), escape(row.name or ""), score,
                      escape(row.status), late_word(row.late) + (f" (-{row.penalty:g})" if row.penalty else ""),
                      str(row.handins), escape((row.message or "")[:60]))
    Console().print(table)


def _person(student, name):
    return student if not name or name == student else f"{name} ({student})"


class _ConsoleEvents(GradeEvents):
    """Grading as a person sees it: notes in yellow, a live bar on a terminal, plain lines in a log."""

    def __init__(self, label):
        self.label, self.total, self.done = label, 0, 0
        self.running = []
        self.lock = threading.Lock()
        self.bar = None

    def note(self, text):
        if text.startswith("warning: "):     # intake could not tell whose: said even with --quiet
            console.print(f"[yellow]warning:[/yellow] {escape(text[len('warning: '):])}", highlight=False)
        elif verbosity() >= NORMAL:
            console.print(f"[yellow]note:[/yellow] {escape(text)}", highlight=False)

    def isolation(self, layer, hides, cpu_groups, protected, lacks=()):
        if verbosity() < NORMAL:
            if layer == "none":
                console.print("[yellow]warning:[/yellow] --isolation none: student code can read everything")
            return
        console.print(f"isolation: {layer} (hides {hides})"
                      + ("; each grading slot has an equal CPU share (cgroup)" if cpu_groups else ""))
        for gap in lacks:
            console.print(f"[yellow]isolation: not held here:[/yellow] {escape(gap)}")
        if protected:
            console.print(f"isolation: made {len(protected)} path(s) private to this user: "
                          + ", ".join(protected[:3]) + (" ..." if len(protected) > 3 else ""))
        if layer == "none":
            console.print("[yellow]warning:[/yellow] --isolation none: student code can read everything this "
                          "user can, the expected values included; every row of this run is marked so")

    def grading(self, total):
        self.total = total
        self.level = verbosity()
        if console.is_terminal and self.level == NORMAL:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=console, transient=True)
            self.task = self.bar.add_task(escape(self.label), total=total)
            return self.bar
        return super().grading(total)

    def _describe(self):
        names = ", ".join(h.name for h in self.running[:3]) + (" ..." if len(self.running) > 3 else "")
        return escape(f"running: {names}" if names else self.label)

    def started(self, handin):
        with self.lock:
            self.running.append(handin)
            if self.bar is not None:
                self.bar.update(self.task, description=self._describe())
            elif self.level >= NORMAL:
                click.echo(f"[{self.done}/{self.total}] running {_who(handin)}: {handin.source}", err=True)

    def finished(self, handin, result):
        with self.lock:
            if handin in self.running:
                self.running.remove(handin)
            self.done += 1
            if self.bar is not None:
                self.bar.update(self.task, advance=1, description=self._describe())
            elif self.level >= NORMAL:
                click.echo(f"[{self.done}/{self.total}] {_who(handin)}: {result.score:g} / {result.max_score:g} "
                           f"{result.status}", err=True)


def _who(handin):
    """A hand-in's student for people: the name, and the key when it is not the name."""
    return handin.name if handin.name == handin.student else f"{handin.name} ({handin.student})"
