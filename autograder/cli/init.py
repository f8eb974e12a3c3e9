"""`autograder init`: make this course the instructor's own.

Asks for (or takes from options, for scripts) the repository and branch the
Colab links open, the course name, the LMS, each assignment's deadline, late
policy and LMS grade column (matched against a Canvas gradebook export when
one is given) and the default time limits; writes course.toml; then runs
`build`, so every badge and link points at the new repository, and prints the
Colab links to share.
"""

import os
from pathlib import Path
from zoneinfo import ZoneInfo

import click

from ..core import course_file
from ..core.assignment import load_assignment
from ..generate.generate import build as run_build
from ..core.course import (DEFAULT_LIMITS, EXAMPLE_REPOSITORY, LMS_CHOICES, Course, CourseError, canvas_id, canvas_url,
                           check_branch, check_timezone, find_root, github_repository, load_course, setting)
from ..core.lms_columns import ASSIGNMENT_COLUMN, best_column
from ..roster.lms_files import RosterFileError, canvas_columns
from ..core.numbers import MAX_LIMIT_SECONDS, MAX_POINTS


def _pairs(values, option, assignment_ids):
    """`ID=VALUE` options as {id: value}, every id an assignment's."""
    pairs = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r}: write ASSIGNMENT=VALUE", param_hint=option)
        if key.strip() not in assignment_ids:
            raise click.BadParameter(f"no assignment {key.strip()!r} (known: {', '.join(assignment_ids)})",
                                     param_hint=option)
        pairs[key.strip()] = value.strip()
    return pairs


def _checked(parse):
    """A click value_proc: re-ask, saying why, when `parse` rejects the answer."""
    def proc(text):
        try:
            return parse(text)
        except CourseError as error:
            raise click.BadParameter(str(error)) from None
    return proc


def _course_root(course_root):
    if course_root:
        return Path(course_root).resolve()
    try:
        return find_root()
    except CourseError:
        here = Path.cwd().resolve()
        if (here / "autograder" / "assignments").is_dir():
            return here                      # a course without course.toml yet: init writes it
        raise


def _seconds(text):
    value = setting(text, 0.01, MAX_LIMIT_SECONDS, "a time limit", " seconds")   # as `grade --timeout` takes it
    return int(value) if value.is_integer() else value


@click.command("init")
@click.option("--name", default=None, help="Course name (students see it in the README and feedback).")
@click.option("--repository", default=None, metavar="URL",
              help="Your GitHub repository, https://github.com/<owner>/<name>: the Colab badges open it.")
@click.option("--branch", default=None, help="The branch the Colab links open (default: main).")
@click.option("--lms", type=click.Choice(LMS_CHOICES), default=None,
              help="Where students hand in and get grades (classroom: Classroom 50, GitHub Classroom's successor, "
                   "or a GitHub Classroom course's clones).")
@click.option("--timezone", default=None, metavar="ZONE",
              help="The course's time zone, as the IANA database names it (America/New_York): deadlines typed "
                   "without an offset, and LMS times without one (D2L's, Moodle's), are read on its clock "
                   "(default when asked: this machine's; none for none).")
@click.option("--canvas-url", default=None, metavar="URL",
              help="Canvas's address, e.g. https://canvas.uni.edu: `canvas pull` and `release --to canvas` use it.")
@click.option("--canvas-course", default=None, metavar="ID",
              help="The course's id in Canvas: the number in its address (…/courses/12345).")
@click.option("--canvas-gradebook", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A Canvas gradebook export (Grades → Export): the grade columns are read from it.")
@click.option("--deadline", "deadlines", multiple=True, metavar="ID=WHEN",
              help="An assignment's deadline, ISO 8601: n-queens=2026-12-01T23:59:00-05:00 "
                   "(no offset: local time; a date alone: 23:59). Repeat per assignment; ID=none removes it.")
@click.option("--late-policy", "late_policies", multiple=True, metavar="ID=POLICY",
              help="none (lateness recorded only), per-day:<points off per started day> or "
                   "cap:<most points a late hand-in earns>, e.g. n-queens=per-day:0.5.")
@click.option("--lms-column", "lms_columns", multiple=True, metavar="ID=COLUMN",
              help="An assignment's grade column in the LMS, e.g. 'n-queens=N-Queens (123456)'.")
@click.option("--case-timeout", type=float, default=None, help="Default seconds per case.")
@click.option("--cell-timeout", type=float, default=None, help="Default seconds per notebook cell.")
@click.option("--submission-timeout", type=float, default=None, help="Default seconds for a whole hand-in.")
@click.option("--yes", "-y", "no_input", is_flag=True,
              help="Ask nothing: every setting not given as an option keeps its current value.")
@click.option("--no-build", is_flag=True, help="Only write course.toml (run `autograder build` later).")
@click.pass_obj
def init_command(course_root, name, repository, branch, lms, timezone, canvas_url, canvas_course, canvas_gradebook,
                 deadlines, late_policies, lms_columns, case_timeout, cell_timeout, submission_timeout, no_input,
                 no_build):
    """Make this course your own: repository, name, deadlines, LMS columns, time limits; then build."""
    root = _course_root(course_root)
    path = root / "course.toml"
    document = course_file.read_document(path)
    answers = _Answers(ask=not no_input)
    course = _course_settings(answers, document, root, name, repository, branch, lms, timezone)
    _canvas_settings(answers, course, canvas_url, canvas_course)
    points = setting(course.get("points_per_assignment", 5), 0.01, MAX_POINTS, "course.toml: points_per_assignment")
    shell = Course(root=root, name=course["name"], repository=course["repository"], branch=course["branch"],
                   points_per_assignment=points, assignments=document.get("assignment", {}))
    assignment_ids = shell.assignment_ids()     # course order: the prompts follow the semester
    if not assignment_ids:
        raise CourseError(f"{root} has no assignments (autograder/assignments/<id>/cases.toml)")
    given = {option: _pairs(values, option, assignment_ids) for option, values in
             (("--deadline", deadlines), ("--late-policy", late_policies), ("--lms-column", lms_columns))}
    columns = _canvas_columns(answers, course["lms"], canvas_gradebook)
    _columns_in_the_export(given["--lms-column"], columns, canvas_gradebook)
    zone = ZoneInfo(course["timezone"]) if course.get("timezone") else None
    tables = {a: dict(t) for a, t in document.get("assignment", {}).items()}
    for assignment_id in assignment_ids:
        _assignment_settings(answers, tables.setdefault(assignment_id, {}), load_assignment(shell, assignment_id),
                             {option: pairs.get(assignment_id) for option, pairs in given.items()},
                             course["lms"], columns, points, zone)
    document.update(course=course, assignment=tables,
                    limits=_limits(answers, document.get("limits", {}), case_timeout=case_timeout,
                                   cell_timeout=cell_timeout, submission_timeout=submission_timeout))
    course_file.write(path, document, assignment_ids)
    _summary(load_course(root), assignment_ids, build=not no_build)


class _Answers:
    """Each setting from its option if given, else asked (re-asked until valid), else kept as it is."""

    def __init__(self, ask):
        self.ask = ask

    def __call__(self, given, prompt, current, parse, **kwargs):
        if given is None and self.ask:
            return click.prompt(prompt, default=current, value_proc=_checked(parse), **kwargs)
        value = current if given is None else given
        return _checked(parse)(value) if isinstance(value, str) else value

    def say(self, text):
        if self.ask:
            click.echo(text)


def machine_timezone():
    """This machine's time zone by its IANA name ("Europe/Paris"), or "" when it cannot be told: $TZ, then
    /etc/timezone (Debian's), then where /etc/localtime links into the zoneinfo database."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except OSError:
        pass
    try:
        linked = os.path.realpath("/etc/localtime")
        candidates.append(linked.split("zoneinfo/", 1)[1] if "zoneinfo/" in linked else "")
    except OSError:
        pass
    for name in candidates:
        try:
            if name and check_timezone(name, "") == name and "/" in name:
                return name
        except CourseError:
            continue
    return ""


def _zone_answer(text):
    value = str(text).strip()
    return "" if value.lower() in ("", "none") else check_timezone(value, "the course's time zone")


def _course_settings(answers, document, root, name, repository, branch, lms, timezone=None):
    course = dict(document.get("course", {}))
    course["name"] = answers(name, "Course name", course.get("name", root.name), _name)
    course["repository"] = answers(repository, "Your GitHub repository (your fork of this course)",
                                   course.get("repository", EXAMPLE_REPOSITORY), github_repository)
    course["branch"] = answers(branch, "Branch the Colab links open", course.get("branch", "main"), check_branch)
    course["lms"] = answers(lms, "LMS (" + ", ".join(LMS_CHOICES) + "; classroom: Classroom 50)",
                            course.get("lms", "other"), _choice(LMS_CHOICES, "lms"))
    zone = answers(timezone, "The course's time zone (deadlines and LMS times without an offset are read on its "
                             "clock; none for none)",
                   course.get("timezone") or (machine_timezone() if answers.ask else "") or "none", _zone_answer)
    if zone:
        course["timezone"] = zone
    else:
        course.pop("timezone", None)
    return course


def _columns_in_the_export(given, columns, export):
    """Every --lms-column checked against the Canvas export given with it, at once: a column the export lacks
    would make a new Canvas assignment, and `release` would refuse it weeks later."""
    if not columns:
        return
    unknown = {a: c for a, c in given.items() if c and c not in columns}
    if unknown:
        assignment_id, column = next(iter(unknown.items()))
        raise CourseError(f"--lms-column {assignment_id}={column!r}: the Canvas gradebook export {export} has no "
                          f"such column (its grade columns: {', '.join(repr(c) for c in columns) or 'none'}); "
                          "nothing was written")


def _canvas_settings(answers, course, url, course_id):
    """Canvas's address and the course's id there, asked for a Canvas course (for its API: `canvas pull`,
    `release --to canvas`); either left out when empty."""
    if course["lms"] != "canvas" and url is None and course_id is None:
        return
    found = answers(url, "Canvas's address, for its API (e.g. https://canvas.uni.edu; empty for none)",
                    course.get("canvas_url", ""), canvas_url, show_default=bool(course.get("canvas_url")))
    number = answers(course_id, "The course's id in Canvas (the number in its address, …/courses/12345; empty "
                     "for none)", str(course.get("canvas_course", "")),
                     lambda text: canvas_id(text, "the course's id in Canvas"),
                     show_default=bool(course.get("canvas_course")))
    for key, value in (("canvas_url", found), ("canvas_course", int(number) if number else "")):
        if value:
            course[key] = value
        else:
            course.pop(key, None)


def _canvas_columns(answers, lms, export):
    """The assignment columns of the Canvas gradebook export, if one is given (or named when asked)."""
    if export is None and answers.ask and lms == "canvas":
        answer = click.prompt("Canvas gradebook export, to read the grade columns from (Grades → Export; "
                              "empty to skip)", default="", show_default=False).strip()
        export = Path(answer).expanduser() if answer else None
    if export is None:
        return []
    try:
        columns = canvas_columns(export)
    except RosterFileError as error:
        raise CourseError(str(error)) from None
    answers.say("Grade columns in the gradebook export:")
    for number, column in enumerate(columns, 1):
        answers.say(f"  {number:>2}. {column}")
    return columns


def _assignment_settings(answers, table, assignment, given, lms, columns, points, zone=None):
    """Deadline, late policy and grade column of one assignment, into its course.toml table."""
    answers.say(f"{assignment.id}: {assignment.title}")
    _lateness_settings(answers, table, assignment, given, points, zone)
    column = given["--lms-column"]
    if column is None and columns:
        column = _column_from_export(answers, table, assignment, columns)
    elif column is None and answers.ask and lms in ("canvas", "moodle", "gradescope"):
        column = click.prompt("  grade column in the LMS (empty for the assignment's title)",
                              default=table.get("lms_column", ""), show_default=bool(table.get("lms_column")))
    if column is not None:
        if column.strip():
            table["lms_column"] = column.strip()
        else:
            table.pop("lms_column", None)
    if lms == "canvas" and "lms_column" in table and not ASSIGNMENT_COLUMN.match(table["lms_column"]):
        click.echo(f"warning: {assignment.id}: Canvas heads grade columns `Name (id)`; importing a column "
                   f"named {table['lms_column']!r} makes a new assignment", err=True)


def _lateness_settings(answers, table, assignment, given, points, zone=None):
    where = f"[assignment.{assignment.id}]"
    deadline = answers(given["--deadline"], "  deadline (ISO 8601; none for no deadline)",
                       table.get("deadline", "none"), lambda answer: _deadline(answer, zone))
    if deadline is None:
        table.pop("deadline", None)
    else:
        table["deadline"] = deadline
    policy, amount = table.get("late_policy", "none"), table.get("late_penalty", table.get("late_cap"))
    current = f"{policy}:{amount:g}" if policy != "none" and amount is not None else policy
    late = answers(given["--late-policy"], "  late policy (none, per-day:<points off per day>, cap:<most points>)",
                   current, lambda text: course_file.parse_late_policy(text, points, where))
    if isinstance(late, dict):
        for key in ("late_policy", "late_penalty", "late_cap"):
            table.pop(key, None)
        table.update(late)


def _column_from_export(answers, table, assignment, columns):
    """The grade column picked from a Canvas export's columns: asked, else the best guess, else None."""
    known = table.get("lms_column")
    guess = known if known in columns else best_column(assignment.id, assignment.title, columns)
    if answers.ask:
        number = click.prompt("  grade column (number from the list; 0 for none)",
                              default=columns.index(guess) + 1 if guess else 0, type=click.IntRange(0, len(columns)))
        return columns[number - 1] if number else ""
    if not guess:
        click.echo(f"warning: {assignment.id}: no column of the gradebook export is clearly this "
                   f"assignment; name it with --lms-column {assignment.id}='<column>'", err=True)
    return guess


LIMIT_PROMPTS = {"case_timeout": "Default time limit per case, seconds",
                 "cell_timeout": "Default time limit per notebook cell, seconds",
                 "submission_timeout": "Default time limit per hand-in, seconds"}


def _limits(answers, limits, **given):
    limits = dict(limits)
    for key, prompt in LIMIT_PROMPTS.items():
        if given[key] is not None and given[key] <= 0:
            raise click.BadParameter("must be above 0 seconds", param_hint=f"--{key.replace('_', '-')}")
        value = answers(given[key], prompt, limits.get(key, DEFAULT_LIMITS[key]), _seconds)
        limits[key] = int(value) if float(value).is_integer() else float(value)
    return limits


def _summary(course, assignment_ids, build):
    click.echo(f"wrote course.toml: {course.name!r}, {course.repository} (branch {course.branch}), lms {course.lms}")
    for assignment_id in assignment_ids:
        table = course.assignments.get(assignment_id, {})
        due = course_file.deadline_text(table["deadline"]) if "deadline" in table else "no deadline"
        column = f", grade column {table['lms_column']!r}" if "lms_column" in table else ""
        click.echo(f"  {assignment_id}: {due}; {course_file.late_policy_text(table)}{column}")
    if course.is_example:
        click.echo(f"warning: the repository is still the example {EXAMPLE_REPOSITORY}: "
                   "run init again with your fork's URL", err=True)
    if not build:
        click.echo("not built: run `autograder build` before you push")
        return
    report = run_build(course, progress=lambda message: click.echo(f"  {message}", err=True), retime=False)
    for written in report.written:
        click.echo(f"wrote {written}")
    click.echo("Colab links to share with students (live once you push):")
    for assignment_id in assignment_ids:
        assignment = load_assignment(course, assignment_id)
        click.echo(f"  {assignment_id}: {course.colab_url(assignment.student_path.relative_to(course.root).as_posix())}")
    click.echo("next: git add -A && git commit -m 'Our course settings' && git push")


def _name(text):
    if not text.strip():
        raise CourseError("the course name cannot be empty")
    return text.strip()


def _deadline(answer, zone=None):
    """A deadline typed without an offset is on the course's clock (its time zone), else this machine's."""
    if isinstance(answer, str) and answer.strip().lower() in ("", "none"):
        return None
    return course_file.parse_deadline(answer, zone)     # also a TOML date-time kept from course.toml


def _choice(choices, what):
    def parse(text):
        value = text.strip().lower()
        if value not in choices:
            raise CourseError(f"{what} {text!r} is not one of {', '.join(choices)}")
        return value
    return parse
