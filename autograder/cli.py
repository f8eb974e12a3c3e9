"""The `autograder` command: build, grade, feedback, report, release (and export)."""

import os
import shlex
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .assignment import AssignmentError, load_assignment
from .audit.cli import audit_command
from .build import build as run_build
from .course import EXAMPLE_REPOSITORY, LATE_POLICIES, CourseError, late_rules, load_course
from .errors import BuildError
from .export.cli import export
from .feedback.cli import feedback_command, release_command, report_command
from .init_command import init_command
from .gradebook import Gradebook, GradebookError
from .gradebook.store import late_word
from .intake import IntakeError, IntakeOptions, collect
from .engine.isolation import HIDES, LAYERS, MAX_SLOTS
from .engine.sandbox import Limits, Sandbox, SandboxError
from .engine.scheduler import grade_all, grader_error

console = Console(stderr=True)


class _OneLineErrors(click.Group):
    """Known failures print one line and exit 1, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (CourseError, AssignmentError, BuildError, IntakeError, GradebookError, SandboxError) as error:
            click.echo(f"autograder: error: {error}", err=True)
            sys.exit(1)


@click.group(cls=_OneLineErrors)
@click.option("--course", "course_root", type=click.Path(file_okay=False, path_type=Path),
              help="The course folder (default: the one holding course.toml, at or above here).")
@click.pass_context
def main(ctx, course_root):
    """Build and grade the course's notebook assignments."""
    ctx.obj = course_root


@main.command()
@click.option("--check", is_flag=True, help="Write nothing; fail and name the files that are out of date.")
@click.pass_obj
def build(course_root, check):
    """Regenerate student notebooks, expected values and the public rubric."""
    course = load_course(course_root)
    if course.is_example:
        click.echo(f"warning: course.toml still names the example repository {EXAMPLE_REPOSITORY}: badges and "
                   "links point there until you run `autograder init`", err=True)
    report = run_build(course, check=check, progress=lambda m: console.print(f"[dim]{m}[/dim]"))
    if check and report.stale:
        click.echo("out of date (run `autograder build`):", err=True)
        for path in report.stale:
            click.echo(f"  {path}", err=True)
    for problem in report.failures:
        click.echo(problem, err=True)
    if (check and report.stale) or report.failures:
        sys.exit(1)
    if check:
        click.echo("all generated files are up to date")
    else:
        for path in report.written:
            click.echo(f"wrote {path}")
        if not report.written:
            click.echo("nothing to do: all generated files are up to date")


@main.command()
@click.option("--assignment", "assignment_id", required=True, help="Assignment id, e.g. n-queens.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for gradebook.db, grades.csv and unpacked archives.")
@click.option("--jobs", type=click.IntRange(1, MAX_SLOTS), default=None,
              help="Hand-ins graded at once (default: the number of cores).")
@click.option("--timeout", type=click.FloatRange(min=0.01), default=None,
              help="CPU seconds per case, for every case (default: each case's limit from the reference's timing).")
@click.option("--submission-timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds for a whole hand-in (default: the assignment's submission_timeout).")
@click.option("--limit-floor", type=click.FloatRange(min=0.01), default=None,
              help="Shortest case limit in CPU seconds, for this run (default: cases.toml's limit_floor).")
@click.option("--limit-factor", type=click.FloatRange(min=1), default=None,
              help="A case's limit as a multiple of the reference's time, for this run "
                   "(default: cases.toml's limit_factor).")
@click.option("--memory", type=click.IntRange(min=64), default=2048, show_default=True,
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
@click.option("--late-penalty", type=click.FloatRange(min=0), default=None, help="Points off per started day late.")
@click.option("--late-cap", type=click.FloatRange(min=0), default=None, help="Most points a late hand-in earns.")
@click.option("--merge", is_flag=True,
              help="Add these hand-ins to an --out that holds another class's grades (refused otherwise).")
@click.option("--isolation", type=click.Choice(["auto", *LAYERS]), default="auto", show_default=True,
              help="How hand-ins are shut in: the strongest layer that works here, or one by name. "
                   "'none' (no protection) is never picked by itself.")
@click.argument("paths", nargs=-1, required=True)
@click.pass_obj
def grade(course_root, assignment_id, out_dir, jobs, timeout, submission_timeout, limit_floor, limit_factor, memory,
          regrade, student_pattern, classroom_prefix, isolation, deadline, late_policy, late_penalty, late_cap, merge,
          paths):
    """Grade hand-ins: notebooks, .py files, folders, LMS zips or Classroom repository clones."""
    course = load_course(course_root)
    assignment = load_assignment(course, assignment_id)
    rules = late_rules(course, assignment.id, deadline, late_policy, late_penalty, late_cap)
    expected = assignment.load_expected()
    settings = assignment.settings(case_timeout=timeout, budget=submission_timeout, limit_floor=limit_floor,
                                   limit_factor=limit_factor)
    jobs = jobs or len(os.sched_getaffinity(0))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / ".write-test").touch()
        (out_dir / ".write-test").unlink()
    except OSError as error:
        raise IntakeError(f"cannot write to {out_dir}: {error.strerror}") from None
    options = IntakeOptions(assignment.id, assignment.notebook, student_pattern, classroom_prefix)
    intake = collect(paths, out_dir / "handins", options)
    for note in intake.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)
    gradebook = Gradebook(out_dir / "gradebook.db")
    for handin in intake.handins:
        gradebook.adopt(assignment.id, handin)       # rows of an older gradebook, keyed by name
    _same_class(gradebook, assignment.id, intake, out_dir, merge)
    key = assignment.grader_key(settings)
    todo = [h for h in intake.handins if regrade or not gradebook.is_graded(assignment.id, h, key)]
    skipped = len(intake.handins) - len(todo)

    cancel = threading.Event()
    graded = 0
    try:
        # What the "users" layer must hide by file permissions (the others hide everything but the OS).
        private = [course.root / "solutions", course.cases_dir, *(Path(p) for p in paths)]
        with Sandbox(replace(Limits(), memory_mb=memory), workdir=out_dir, isolation=isolation,
                     protect=private) as sandbox:
            run_id = gradebook.start_run(assignment.id, shlex.join(["autograder", *sys.argv[1:]]), jobs,
                                         sandbox.isolation)
            console.print(f"isolation: {sandbox.isolation} (hides {HIDES[sandbox.isolation]})"
                          + ("; each grading slot has an equal CPU share (cgroup)" if sandbox.cpu_groups else ""))
            if sandbox.protected:
                console.print(f"isolation: made {len(sandbox.protected)} path(s) private to this user: "
                              + ", ".join(sandbox.protected[:3]) + (" ..." if len(sandbox.protected) > 3 else ""))
            if sandbox.isolation == "none":
                console.print("[yellow]warning:[/yellow] --isolation none: student code can read everything this "
                              "user can, the expected values included; every row of this run is marked so")
            with _Progress(assignment.id, len(todo)) as progress:
                results = grade_all(assignment, expected, todo, sandbox, jobs, settings, cancel=cancel,
                                    started=progress.started)
                try:
                    for handin, result in results:
                        try:
                            gradebook.record(run_id, handin, result, key)
                        except Exception as error:  # noqa: BLE001 - the row still gets written, saying why
                            result = grader_error(assignment, handin, error)
                            gradebook.record(run_id, handin, result, key)
                        graded += 1
                        progress.finished(handin, result)
                finally:
                    results.close()
            gradebook.finish_run(run_id)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)     # a second Ctrl-C must not cut grades.csv short
        cancel.set()
        gradebook.apply_lateness(assignment.id, rules)
        gradebook.export_csv(assignment.id, out_dir / "grades.csv")
        gradebook.close()
        click.echo(f"interrupted: graded {graded} of {len(todo)} hand-in(s) in this run; {out_dir / 'grades.csv'} "
                   "has everything graded so far. Run the same command again to resume: hand-ins already "
                   "graded are kept and not graded again.", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)   # hand-ins still running are the sandbox's, already stopped; do not wait for their threads
    late = gradebook.apply_lateness(assignment.id, rules)
    gradebook.export_csv(assignment.id, out_dir / "grades.csv")
    rows = gradebook.grades(assignment.id)
    unknown = sum(1 for row in rows if row[8] is None)       # the `late` column: nothing said either way
    _print_table(rows)
    others = [a for a in gradebook.assignments() if a != assignment.id]
    gradebook.close()
    notes = [f"graded {len(todo)} hand-in(s)"]
    if skipped:
        notes.append(f"{skipped} unchanged since an earlier run (use --regrade to grade them again)")
    if intake.ignored:
        notes.append(f"ignored {len(intake.ignored)} file(s) that are not hand-ins: "
                     + ", ".join(intake.ignored[:5]) + (" ..." if len(intake.ignored) > 5 else ""))
    click.echo("; ".join(notes))
    click.echo(_lateness_summary(rules, late, unknown))
    if others:
        click.echo(f"note: {out_dir / 'gradebook.db'} also holds {', '.join(others)}; grades.csv has "
                   f"{assignment.id} only")
    click.echo(f"wrote {out_dir / 'grades.csv'} and {out_dir / 'gradebook.db'}")


def _same_class(gradebook, assignment_id, intake, out_dir, merge):
    """A second class graded into the same --out would merge into the first: refuse unless --merge."""
    known = gradebook.students(assignment_id)
    incoming = {h.student for h in intake.handins}
    if not known:
        return
    # Grading one file at a time into one folder is not a second class: both sides must be a class.
    if not known & incoming and len(known) > 1 and len(incoming) > 1 and not merge:
        raise IntakeError(
            f"{out_dir} already holds {assignment_id} grades of another class ({len(known)} student(s), from "
            f"{', '.join(gradebook.sources(assignment_id))} ...), none of whom is in these hand-ins: "
            "grade into a new --out, or add --merge to put both classes in one gradebook")
    new = sorted(incoming - known)
    if new:
        console.print(f"[yellow]note:[/yellow] {len(new)} student(s) new to {escape(str(out_dir))}: "
                      f"{escape(', '.join(new[:8]))}{' ...' if len(new) > 8 else ''}", highlight=False)


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


main.add_command(feedback_command)
main.add_command(report_command)
main.add_command(release_command)
main.add_command(export)
main.add_command(audit_command)
main.add_command(init_command)


class _Progress:
    """What is running now and how far the class is: a live bar on a terminal, plain lines otherwise (a log)."""

    def __init__(self, label, total):
        self.label, self.total, self.done = label, total, 0
        self.running = []
        self.lock = threading.Lock()
        self.live = console.is_terminal
        self.bar = None

    def __enter__(self):
        if self.live:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=console, transient=True)
            self.bar.__enter__()
            self.task = self.bar.add_task(escape(self.label), total=self.total)
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def _describe(self):
        names = ", ".join(h.name for h in self.running[:3]) + (" ..." if len(self.running) > 3 else "")
        return escape(f"running: {names}" if names else self.label)

    def started(self, handin):
        with self.lock:
            self.running.append(handin)
            if self.live:
                self.bar.update(self.task, description=self._describe())
            else:
                click.echo(f"[{self.done}/{self.total}] running {handin.name} ({handin.source})", err=True)

    def finished(self, handin, result):
        with self.lock:
            if handin in self.running:
                self.running.remove(handin)
            self.done += 1
            if self.live:
                self.bar.update(self.task, advance=1, description=self._describe())
            else:
                click.echo(f"[{self.done}/{self.total}] {handin.name}: {result.score:g} / {result.max_score:g} "
                           f"{result.status}", err=True)


def _print_table(rows):
    table = Table(title="Grades")
    for column in ("student", "name", "score", "status", "late", "hand-ins", "note"):
        table.add_column(column)
    for (student, _, score, max_score, status, message, name, _, late, penalty, _, _, count, _) in rows:
        note = (message or "")[:60]
        table.add_row(escape(student), escape(name or ""), f"{score:g} / {max_score:g}", escape(status),
                      late_word(late) + (f" (-{penalty:g})" if penalty else ""), str(count), escape(note))
    Console().print(table)
