"""`autograder init`: make this course the instructor's own.

Asks for (or takes from options, for scripts) the repository and branch the
Colab links open, the course name, the LMS, each assignment's deadline, late
policy and LMS grade column (matched against a Canvas gradebook export when
one is given) and the default time limits; writes course.toml; then runs
`build`, so every badge and link points at the new repository, and prints the
Colab links to share.
"""

from pathlib import Path

import click

from . import course_file
from .assignment import load_assignment
from .build import build as run_build
from .course import DEFAULT_LIMITS, EXAMPLE_REPOSITORY, LMS_CHOICES, Course, CourseError, check_branch, \
    find_root, github_repository, load_course
from .lms_columns import ASSIGNMENT_COLUMN, LmsColumnsError, best_column, canvas_assignment_columns


def _pairs(values, option):
    """`ID=VALUE` options as {id: value}."""
    pairs = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r}: write ASSIGNMENT=VALUE", param_hint=option)
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


def _number(text):
    try:
        value = float(text)
    except ValueError:
        raise CourseError(f"{text!r} is not a number") from None
    if value <= 0:
        raise CourseError("a time limit must be above 0 seconds")
    return int(value) if value.is_integer() else value


@click.command("init")
@click.option("--name", default=None, help="Course name (students see it in the README and feedback).")
@click.option("--repository", default=None, metavar="URL",
              help="Your GitHub repository, https://github.com/<owner>/<name>: the Colab badges open it.")
@click.option("--branch", default=None, help="The branch the Colab links open (default: main).")
@click.option("--lms", type=click.Choice(LMS_CHOICES), default=None,
              help="Where students hand in and get grades (classroom: GitHub Classroom).")
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
def init_command(course_root, name, repository, branch, lms, canvas_gradebook, deadlines, late_policies,
                 lms_columns, case_timeout, cell_timeout, submission_timeout, no_input, no_build):
    """Make this course your own: repository, name, deadlines, LMS columns, time limits; then build."""
    root = _course_root(course_root)
    path = root / "course.toml"
    document = course_file.read_document(path)
    course = dict(document.get("course", {}))
    ask = not no_input

    def setting(given, prompt, current, parse, **kwargs):
        if given is None and ask:
            return click.prompt(prompt, default=current, value_proc=_checked(parse), **kwargs)
        value = current if given is None else given
        return _checked(parse)(value) if isinstance(value, str) else value

    course["name"] = setting(name, "Course name", course.get("name", root.name), lambda t: t.strip() or _empty())
    course["repository"] = setting(repository, "Your GitHub repository (your fork of this course)",
                                   course.get("repository", EXAMPLE_REPOSITORY), github_repository)
    course["branch"] = setting(branch, "Branch the Colab links open", course.get("branch", "main"), check_branch)
    course["lms"] = setting(lms, "LMS (" + ", ".join(LMS_CHOICES) + ")", course.get("lms", "other"),
                            _choice(LMS_CHOICES, "lms"))
    document["course"] = course
    points = float(course.get("points_per_assignment", 5))

    shell = Course(root=root, name=course["name"], repository=course["repository"], branch=course["branch"],
                   points_per_assignment=points)
    assignment_ids = shell.assignment_ids()
    if not assignment_ids:
        raise CourseError(f"{root} has no assignments (autograder/assignments/<id>/cases.toml)")
    titles = {a: load_assignment(shell, a).title for a in assignment_ids}
    deadline_given = _pairs(deadlines, "--deadline")
    policy_given = _pairs(late_policies, "--late-policy")
    column_given = _pairs(lms_columns, "--lms-column")
    for key, given in (("--deadline", deadline_given), ("--late-policy", policy_given),
                       ("--lms-column", column_given)):
        unknown = sorted(set(given) - set(assignment_ids))
        if unknown:
            raise click.BadParameter(f"no assignment {unknown[0]!r} (known: {', '.join(assignment_ids)})",
                                     param_hint=key)

    if canvas_gradebook is None and ask and course["lms"] == "canvas":
        answer = click.prompt("Canvas gradebook export, to read the grade columns from (Grades → Export; "
                              "empty to skip)", default="", show_default=False).strip()
        canvas_gradebook = Path(answer).expanduser() if answer else None
    columns = []
    if canvas_gradebook is not None:
        try:
            columns = canvas_assignment_columns(canvas_gradebook)
        except LmsColumnsError as error:
            raise CourseError(str(error)) from None
        if ask:
            click.echo("Grade columns in the gradebook export:")
            for number, column in enumerate(columns, 1):
                click.echo(f"  {number:>2}. {column}")

    tables = {a: dict(t) for a, t in document.get("assignment", {}).items()}
    for assignment_id in assignment_ids:
        table = tables.setdefault(assignment_id, {})
        where = f"[assignment.{assignment_id}]"
        if ask:
            click.echo(f"{assignment_id}: {titles[assignment_id]}")
        deadline = setting(deadline_given.get(assignment_id), "  deadline (ISO 8601; none for no deadline)",
                           table.get("deadline", "none"),
                           lambda t: None if t.strip().lower() in ("", "none") else course_file.parse_deadline(t))
        if deadline is None:
            table.pop("deadline", None)
        else:
            table["deadline"] = deadline
        current_policy = table.get("late_policy", "none")
        amount = table.get("late_penalty" if current_policy == "per-day" else "late_cap")
        policy = setting(policy_given.get(assignment_id), "  late policy (none, per-day:<points off per day>, "
                         "cap:<most points>)", f"{current_policy}:{amount:g}" if amount is not None and
                         current_policy != "none" else current_policy,
                         lambda t: course_file.parse_late_policy(t, points, where))
        if isinstance(policy, dict):
            for key in ("late_policy", "late_penalty", "late_cap"):
                table.pop(key, None)
            table.update(policy)
        column = column_given.get(assignment_id)
        if column is None and columns:
            guess = table.get("lms_column") if table.get("lms_column") in columns else \
                best_column(assignment_id, titles[assignment_id], columns)
            if ask:
                number = click.prompt("  grade column (number from the list; 0 for none)",
                                      default=columns.index(guess) + 1 if guess else 0,
                                      type=click.IntRange(0, len(columns)))
                column = columns[number - 1] if number else ""
            elif guess:
                column = guess
            else:
                click.echo(f"warning: {assignment_id}: no column of {canvas_gradebook.name} is clearly this "
                           f"assignment; name it with --lms-column {assignment_id}='<column>'", err=True)
        elif column is None and ask and course["lms"] in ("canvas", "moodle", "gradescope"):
            column = click.prompt("  grade column in the LMS (empty for the assignment's title)",
                                  default=table.get("lms_column", ""), show_default=bool(table.get("lms_column")))
        if column is not None:
            if column.strip():
                table["lms_column"] = column.strip()
            else:
                table.pop("lms_column", None)
        if course["lms"] == "canvas" and "lms_column" in table and not ASSIGNMENT_COLUMN.match(table["lms_column"]):
            click.echo(f"warning: {assignment_id}: Canvas heads grade columns `Name (id)`; importing a column "
                       f"named {table['lms_column']!r} makes a new assignment", err=True)
    document["assignment"] = tables

    limits = dict(document.get("limits", {}))
    for key, given in (("case_timeout", case_timeout), ("cell_timeout", cell_timeout),
                       ("submission_timeout", submission_timeout)):
        if given is not None and given <= 0:
            raise click.BadParameter("must be above 0 seconds", param_hint=f"--{key.replace('_', '-')}")
        label = {"case_timeout": "Default time limit per case, seconds",
                 "cell_timeout": "Default time limit per notebook cell, seconds",
                 "submission_timeout": "Default time limit per hand-in, seconds"}[key]
        value = setting(given, label, limits.get(key, DEFAULT_LIMITS[key]), _number)
        limits[key] = int(value) if float(value).is_integer() else float(value)
    document["limits"] = limits

    course_file.write(path, document, assignment_ids)
    course = load_course(root)
    click.echo(f"wrote {path.name}: {course.name!r}, {course.repository} (branch {course.branch}), lms {course.lms}")
    for assignment_id in assignment_ids:
        table = course.assignments.get(assignment_id, {})
        due = course_file.deadline_text(table["deadline"]) if "deadline" in table else "no deadline"
        column = f", grade column {table['lms_column']!r}" if "lms_column" in table else ""
        click.echo(f"  {assignment_id}: {due}; {course_file.late_policy_text(table)}{column}")
    if course.is_example:
        click.echo(f"warning: the repository is still the example {EXAMPLE_REPOSITORY}: "
                   "run init again with your fork's URL", err=True)
    if no_build:
        click.echo("not built: run `autograder build` before you push")
        return
    report = run_build(course, progress=lambda message: click.echo(f"  {message}", err=True))
    for written in report.written:
        click.echo(f"wrote {written}")
    click.echo("Colab links to share with students (live once you push):")
    for assignment_id in assignment_ids:
        assignment = load_assignment(course, assignment_id)
        click.echo(f"  {assignment_id}: {course.colab_url(assignment.student_path.relative_to(root).as_posix())}")
    click.echo("next: git add -A && git commit -m 'Our course settings' && git push")


def _empty():
    raise CourseError("the course name cannot be empty")


def _choice(choices, what):
    def parse(text):
        value = text.strip().lower()
        if value not in choices:
            raise CourseError(f"{what} {text!r} is not one of {', '.join(choices)}")
        return value
    return parse
