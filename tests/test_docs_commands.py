"""Every command the README, CONTRIBUTING.md and docs/ show still works, so none is stale.

The commands a reader copies are the `$ ` lines of ```console blocks; what a command prints follows it, up
to the next `$ ` line. Each command is checked in one of three ways:

* parsed, without running anything: an `autograder` or `nqueens` command line is resolved by click as the
  shell would hand it over (its verb, its options, and values of the right types); `make TARGET` must be a
  Makefile target; `python benchmarks/X.py --opt` an option that script's argparse declares; `python -m
  pytest` paths, test names and markers that exist. A verb, an option or a target that does not exist fails.
* run for real (RUN, marked slow): each page's listed commands in the page's order, in a scratch copy of the
  course of that page's own, with the files the commands name staged there (a Canvas download, a Canvas
  gradebook export); every line of output the page shows must be in what the command printed.
* skipped: programs that are not ours (git, mkdir, ...) are listed in NOT_OURS, each with the reason.

Commands named in prose (`autograder grade ... --isolation auto`, `grade --regrade`) are checked by name:
their verb and every option they give exist. Beside the commands: every page of docs/ is linked from the
README, every relative link of every page leads to a file and heading, every test a page names exists, and the
README stays a five-minute read (its words; and no line over 120 characters outside code blocks and the tables
of docs/, there and in every page).
"""

import ast
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from autograder.cli.main import main as autograder_main
from conftest import ROOT, copy_course
from nqueens.cli import main as nqueens_main
from semesters import CANVAS_ROSTER, canvas_zip

README = ROOT / "README.md"
PAGES = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MOST_WORDS = 1500
LONGEST_LINE = 120

# Programs a page may show that are not ours, so nothing here checks their options.
NOT_OURS = {
    "git": "git's own commands (committing the course's generated files)",
    "gh": "GitHub's CLI (gh classroom clone)",
    "head": "POSIX: shows the first lines of a file the grader wrote",
    "trap": "the shell's: what follows starts with SIGINT ignored, as `nohup` and `cmd &` leave it",
    "ls": "POSIX: shows a folder's modes",
    "mkdir": "POSIX: makes the course's grades folder",
    "chgrp": "POSIX: gives the grades folder to the course's group",
    "chmod": "POSIX: sets the grades folder's modes",
    "find": "POSIX: sets the setgid bit on every folder a course with grades already holds",
    "groupadd": "the system's: makes the course's group (tests/publish/test_shared_course.py does it for real)",
    "usermod": "the system's: puts the teaching team in that group",
    "conda": "conda's own (the student environment, environment.yml)",
    "jupyter": "Jupyter's own (a student working locally)",
    "pip": "pip's own",
    "cd": "the shell's: the commands after it run in the clone",
    "rsync": "copies a course's grades/ from the machine it was graded on (docs/semester.md)",
}
# Programs that run another command: the command they run is checked instead. Where that command starts:
# "flags" after the program's own flags (none of them taking a value), "--" after a `--`, "-c" it is the string
# after `-c`, "-v" after an optional `-v`.
WRAPPERS = {"sudo": "flags", "nohup": "flags", "setsid": "flags", "env": "flags", "time": "flags",
            "setpriv": "--", "runuser": "--", "capsh": "-c", "/usr/bin/time": "-v"}
PYTHONS = {"python", "python3", ".venv/bin/python", "python3.11"}
SHELL_OPERATORS = {"&&", "||", ";", "|", "&", "(", ")"}

# Run for real (slow): each page's listed commands, in the page's order, in a scratch copy of the course of that
# page's own. The value says why the output shown cannot be compared (None: it must be what the command prints).
# The other pages' commands are parsed only: docs/semester.md's need deadlines and a run stopped half way, which
# tests/test_semester.py and tests/test_interrupted_semester.py drive through the same command line; `build`,
# `audit` and `export` take minutes and have tests of their own (tests/test_build.py, tests/test_audit.py, ...).
RUN = {
    "README.md": {
        ".venv/bin/autograder grade --assignment n-queens --out grades/n-queens ~/Downloads/submissions.zip": None,
        ".venv/bin/autograder feedback --out grades/n-queens": None,
        ".venv/bin/autograder report --out grades/n-queens": None,
        ".venv/bin/autograder release --out grades/n-queens --to release/n-queens": None,
        "head -2 release/n-queens/canvas_grades.csv": None,
        ".venv/bin/autograder similarity --out grades/n-queens": None,
        ".venv/bin/autograder roster import export.csv": None,
        ".venv/bin/autograder grade --assignment n-queens --out grades/n-queens n-queens-submissions.zip":
            "the page shows a run stopped by Ctrl-C, then its resumption (tests/test_interrupted_semester.py "
            "sends the real SIGINT)",
    },
    "docs/adopting.md": {".venv/bin/autograder release --students --to release/students": None},
    "docs/nqueens.md": {
        ".venv/bin/nqueens solve 8": None,
        ".venv/bin/nqueens solve 7 --no-three-in-line": None,
        ".venv/bin/nqueens solve 12 --count": None,
        ".venv/bin/nqueens solve 6 --all --solver sat": None,
    },
}
# Output lines that say what this machine allows, not what the page promises.
MACHINE_LINES = ("isolation:",)
# The files the pages' commands name: Canvas's "Download Submissions" zip and its gradebook export, as
# tests/test_semester.py makes them. The first class hands in a broken notebook as Dave's.
FIRST_CLASS = {"students": ["alice", "bob", "carol", "dave"], "files": {"dave": "trent"}}
SEMESTER_CLASS = {"students": ["alice", "bob", "carol", "dave", "erin", "test"]}


@dataclass(frozen=True)
class Shown:
    """A command as a page shows it: where, the command, and the output lines under it."""
    page: Path
    line: int
    command: str
    output: tuple = ()

    def __str__(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}: {self.command}"


# --- Reading the pages --------------------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")


def _blocks(text):
    """(info, first line number, lines) of each fenced code block, its lines without the fence's indentation (a
    block inside a list item is indented), and the lines outside any block."""
    blocks, outside, current = [], [], None
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if current is None and fence:
            indent = len(line) - len(line.lstrip())
            current = (fence.group(2), number + 1, [], fence.group(1), indent)
        elif current is not None and line.strip().startswith(current[3]):
            blocks.append(current[:3])
            current = None
        elif current is not None:
            current[2].append(line[current[4]:] if line[:current[4]].isspace() else line.lstrip())
        else:
            outside.append((number, line))
    return blocks, outside


def console_commands(page):
    """Every `$ ` command of the page's console blocks, with the output shown under it."""
    shown = []
    blocks, _ = _blocks(page.read_text(encoding="utf-8"))
    for info, first, lines in blocks:
        if info != "console":
            continue
        index = 0
        while index < len(lines):
            line = lines[index]
            if not line.startswith("$ "):
                index += 1
                continue
            start, command = index, line[2:]
            while command.endswith("\\") and index + 1 < len(lines):
                index += 1
                command = command[:-1] + " " + lines[index].strip()
            index += 1
            output = []
            while index < len(lines) and not lines[index].startswith("$ "):
                output.append(lines[index])
                index += 1
            shown.append(Shown(page, first + start, command.strip(), tuple(output)))
    return shown


def prose_lines(page):
    return _blocks(page.read_text(encoding="utf-8"))[1]


def prose_mentions(page):
    """Commands named in a page's prose, in backticks: `autograder VERB ...`, or `VERB --option ...` (a span may
    run over a line break, as Markdown lets it)."""
    verbs = set(autograder_main.list_commands(click.Context(autograder_main)))   # verbs load lazily
    lines = prose_lines(page)
    text = "\n".join(line for _, line in lines)
    found = []
    for match in re.finditer(r"`([^`]+)`", text):
        span = " ".join(match.group(1).split())
        if "\n\n" in match.group(1) or not span:
            continue
        number = lines[text.count("\n", 0, match.start())][0]
        program, words = span.split()[0], span.split()
        if program in ("autograder", ".venv/bin/autograder", "nqueens", ".venv/bin/nqueens"):
            found.append(Shown(page, number, span))
        elif program in verbs and len(words) > 1 and words[1].startswith("--"):
            found.append(Shown(page, number, f"autograder {span}"))
    return found


# --- Splitting a shell line into the programs it runs ---------------------------------------------------------

def simple_commands(command):
    """The argument lists of the programs a shell line runs, wrappers unwrapped, `VAR=value` prefixes dropped."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words, found = list(lexer), [[]]
    for word in words:
        if word in SHELL_OPERATORS:
            found.append([])
        else:
            found[-1].append(word)
    return [unwrapped for argv in found if argv for unwrapped in _unwrap(_without_assignments(argv))]


def _without_assignments(argv):
    while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
        argv = argv[1:]
    return argv


def _unwrap(argv):
    if not argv or argv[0] not in WRAPPERS:
        return [argv] if argv else []
    rule, rest = WRAPPERS[argv[0]], argv[1:]
    if rule == "-c":                                 # capsh ... -- -c 'COMMAND'
        assert "-c" in rest, f"{argv[0]} without -c: {argv}"
        return simple_commands(rest[rest.index("-c") + 1])
    if rule == "-v":                                 # /usr/bin/time [-v] COMMAND
        rest = rest[1:] if rest[:1] == ["-v"] else rest
    elif rule == "--":                               # setpriv ... -- COMMAND
        assert "--" in rest, f"{argv[0]} without --: {argv}"
        rest = rest[rest.index("--") + 1:]
    else:
        while rest and rest[0].startswith("-"):
            rest = rest[1:]
    return _unwrap(_without_assignments(rest))


# --- Checking one program's arguments -----------------------------------------------------------------------

def _click_parses(group, program, args):
    """Resolve `args` through a click group as the shell would hand them over, running nothing.

    Returns None, or why click refused. A path that must exist is the reader's own file, not the page's
    concern, so only that refusal is let through."""
    try:
        context = group.make_context(program, list(args))
        command = group
        while isinstance(command, click.Group):
            rest = [*getattr(context, "_protected_args", []), *context.args]   # click keeps the verb apart
            if not rest:
                return None if command.invoke_without_command else f"{program}: no command given"
            name, command, rest = command.resolve_command(context, rest)
            context = command.make_context(name, rest, parent=context)
    except click.exceptions.Exit as done:            # --help, --version
        return None if done.exit_code == 0 else f"exit {done.exit_code}"
    except click.BadParameter as error:
        if isinstance(error.param.type, click.Path) and error.param.type.exists and "not exist" in str(error):
            return None
        return error.format_message()
    except click.ClickException as error:
        return error.format_message()
    return None


def _command_for(group, words):
    """The click command a prose mention names, and the words after its name."""
    command, words = group, list(words)
    while isinstance(command, click.Group) and words:
        sub = command.get_command(click.Context(command), words[0])   # loads a lazy verb's module
        if sub is None:
            break
        command, words = sub, words[1:]
    return command, words


def _option_names(command):
    return {name for param in command.params for name in [*param.opts, *param.secondary_opts]} | {"-h", "--help"}


def _options_exist(group, words):
    """Only names: the verb and every `--option` (values are placeholders in prose: `--student WHO`).

    The group's own options come before the verb (`autograder --quiet grade`)."""
    before = words[:next((i for i, w in enumerate(words) if not w.startswith("-")), len(words))]
    command, rest = _command_for(group, words[len(before):])
    if command is group and rest and not rest[0].startswith("-"):
        return f"no command {rest[0]!r}"
    options = [w.split("=")[0] for w in rest if w.startswith("-") and w not in ("-", "--")
               and not re.fullmatch(r"-\d+(\.\d+)?", w)]                       # -3 is a value: a bad N
    unknown = [o for o in options if o not in _option_names(command)]
    unknown += [w.split("=")[0] for w in before if w.split("=")[0] not in _option_names(group)]
    return f"no option {', '.join(unknown)} of {command.name}" if unknown else None


def _makefile_targets():
    """The Makefile's targets, its variables expanded (`$(VENV)/.installed` is `.venv/.installed`)."""
    text = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w./$()-]+):(?!=)", text, re.M))
    variables = dict(re.findall(r"^(\w+)\s*:?=\s*(\S+)\s*$", text, re.M))
    return {re.sub(r"\$\((\w+)\)", lambda m: variables.get(m.group(1), m.group(0)), t) for t in targets}


def _argparse_options(script):
    """The options a benchmark's argparse declares, read from its source (running it would import the grader)."""
    calls = [node for node in ast.walk(ast.parse(script.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument"]
    names = {arg.value for call in calls for arg in call.args if isinstance(arg, ast.Constant)}
    return {name for name in names if str(name).startswith("-")} | {"-h", "--help"}


def _markers():
    """The test tiers registered in pyproject.toml."""
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return {line.split(":")[0].strip() for line in ini["markers"]}


def _pytest_arguments_exist(args):
    """A pytest command line's markers, files and test names, which go stale when tests move."""
    problems, index = [], 0
    while index < len(args):
        arg = args[index]
        if arg == "-m" and index + 1 < len(args):
            words = set(re.findall(r"[A-Za-z_]\w*", args[index + 1])) - {"and", "or", "not"}
            problems += [f"no marker {w!r}" for w in sorted(words - _markers())]
            index += 2
            continue
        if arg in ("-n", "-k", "--dist", "-p", "--durations") and index + 1 < len(args):
            index += 2
            continue
        if not arg.startswith("-"):
            problems += _test_reference_problems(arg)
        index += 1
    return problems


def _test_reference_problems(reference):
    path, _, name = reference.partition("::")
    if not (ROOT / path).exists():
        return [f"no file {path}"]
    if name and not re.search(rf"^\s*def {re.escape(name.split('[')[0])}\(", (ROOT / path).read_text(), re.M):
        return [f"no test {name} in {path}"]
    return []


def _runnable_module_problems(name):
    """`python -m autograder.x.y`: a module of ours that exists and runs as a script (no click to parse it with)."""
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        spec = None
    if spec is None or not spec.origin:
        return [f"no module {name}"]
    source = Path(spec.origin).read_text(encoding="utf-8")
    return [] if re.search(r"__name__ == .__main__.", source) else [f"{name} does not run as a script"]


def problems_of(argv):
    """Why one program's arguments, as a page shows them, would not run (an empty list when they would)."""
    program, args = argv[0], argv[1:]
    if program in PYTHONS and args[:2] == ["-m", "autograder"]:
        program, args = "autograder", args[2:]
    elif program in PYTHONS and args[:2] == ["-m", "nqueens"]:
        program, args = "nqueens", args[2:]
    if program in ("autograder", ".venv/bin/autograder"):
        problem = _click_parses(autograder_main, "autograder", args)
        return [problem] if problem else []
    if program in ("nqueens", ".venv/bin/nqueens"):
        problem = _click_parses(nqueens_main, "nqueens", args)
        return [problem] if problem else []
    if program == "make":
        targets = _makefile_targets()
        return [f"no Makefile target {t!r}" for t in args if not t.startswith("-") and "=" not in t
                and t not in targets]
    if program in PYTHONS and args[:1] == ["-m"] and args[1].split(".")[0] in ("autograder", "nqueens"):
        return _runnable_module_problems(args[1])
    if program in PYTHONS and args[:2] == ["-m", "pytest"]:
        return _pytest_arguments_exist(args[2:])
    if program in PYTHONS and args[:2] == ["-m", "venv"]:
        return []                                    # Python's own
    if program in PYTHONS and args and args[0].startswith("benchmarks/"):
        script = ROOT / args[0]
        if not script.exists():
            return [f"no script {args[0]}"]
        known = _argparse_options(script)
        # After `--`, the command a script runs (benchmarks/stress.py): checked as a command of its own.
        own, after = (args[1:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args[1:], [])
        return [f"no option {w.split('=')[0]} of {args[0]}" for w in own
                if w.startswith("-") and w.split("=")[0] not in known] + (problems_of(after) if after else [])
    if program in NOT_OURS or Path(program).name in NOT_OURS:
        return []
    return [f"{program!r} is neither ours nor in NOT_OURS (with the reason it need not be checked)"]


def all_shown():
    return [shown for page in PAGES if page.exists() for shown in console_commands(page)]


# --- The checks ---------------------------------------------------------------------------------------------

def test_every_command_shown_parses_or_is_not_ours():
    shown = all_shown()
    assert len(shown) > 50, "the pages show far fewer commands than they did: did the reading break?"
    stale = []
    for item in shown:
        try:
            stale += [f"{item}: {problem}" for argv in simple_commands(item.command) for problem in problems_of(argv)]
        except ValueError as error:                       # an unclosed quote: no shell would run it either
            stale.append(f"{item}: {error}")
    assert stale == []


def test_every_command_block_shows_its_commands_as_dollar_lines():
    """A command outside a `$ ` line would be checked by nothing: console blocks start with one, and shell
    commands are never shown in a sh or bash block instead."""
    hidden = []
    for page in PAGES:
        for info, first, lines in _blocks(page.read_text(encoding="utf-8"))[0]:
            shown = [line for line in lines if line.strip()]
            if info in ("sh", "bash", "shell", "zsh", "shell-session"):
                hidden.append(f"{page.relative_to(ROOT)}:{first}: a {info} block (show commands as `$ ` lines "
                              "in a console block)")
            elif info == "console" and not (shown and shown[0].startswith("$ ")):
                hidden.append(f"{page.relative_to(ROOT)}:{first}: a console block whose first line is no command")
    assert hidden == []


def test_every_command_named_in_prose_exists():
    mentions = [m for page in PAGES if page.exists() for m in prose_mentions(page)]
    assert len(mentions) > 50
    stale = []
    for mention in mentions:
        try:
            words = [w for w in shlex.split(mention.command.replace("…", "..."))[1:] if w != "..."]
        except ValueError:                                # a quote left open in prose: its words as they are
            words = [w for w in mention.command.replace("…", "...").split()[1:] if w != "..."]
        group = nqueens_main if "nqueens" in mention.command.split()[0] else autograder_main
        problem = _options_exist(group, words)
        if problem:
            stale.append(f"{mention}: {problem}")
    assert stale == []


def test_a_verb_or_option_that_does_not_exist_fails_the_check():
    """The checks above can fail: what they would say of commands that do not exist."""
    assert problems_of(["autograder", "grade", "--assignment", "n-queens", "--out", "x", "--colour", "y"])
    assert problems_of([".venv/bin/autograder", "regrade", "--out", "x"])
    assert problems_of(["autograder", "adjust", "--assignment", "n-queens", "--student", "bob", "--points", "nan",
                        "--reason", "r"])
    assert problems_of(["python", "-m", "autograder.export.cli", "otter"]) == ["no module autograder.export.cli"]
    assert not problems_of([".venv/bin/python", "-m", "autograder.export.tools", "install", "otter"])  # the Makefile's
    assert problems_of(["nqueens", "solve", "8", "--fast"])
    assert problems_of(["make", "demos"])
    assert problems_of(["python", "benchmarks/grade_throughput.py", "--layer", "all"])
    assert problems_of(["python", "-m", "pytest", "-m", "quick"])
    assert problems_of(["python", "-m", "pytest", "tests/test_layout.py::test_no_such_thing"])
    assert _options_exist(autograder_main, ["grade", "--regrades"])
    assert not problems_of(["autograder", "roster", "import", "no-such-export.csv"])    # the reader's own file
    assert not _options_exist(autograder_main, ["grade", "...", "--isolation", "auto"])


def test_a_wrapped_command_is_checked_as_the_command_it_runs():
    assert simple_commands("AUTOGRADER_TEST_USER=autograder-ci .venv/bin/python -m pytest -m conditions") == [
        [".venv/bin/python", "-m", "pytest", "-m", "conditions"]]
    assert simple_commands("capsh --drop=cap_sys_admin -- -c '.venv/bin/autograder grade --out x y'") == [
        [".venv/bin/autograder", "grade", "--out", "x", "y"]]
    assert simple_commands("mkdir -p grades && chgrp g grades   # a comment") == [
        ["mkdir", "-p", "grades"], ["chgrp", "g", "grades"]]
    assert simple_commands("/usr/bin/time -v make quick") == [["make", "quick"]]


def test_every_page_of_docs_is_linked_from_the_readme():
    readme = README.read_text(encoding="utf-8")
    linked = {Path(target.split("#")[0]) for target in re.findall(r"\]\(([^)\s]+)\)", readme)}
    pages = {page.relative_to(ROOT) for page in (ROOT / "docs").glob("*.md")} | {Path("CONTRIBUTING.md")}
    assert sorted(map(str, pages - linked)) == []


def test_every_relative_link_leads_to_a_file_and_its_heading():
    broken = []
    for page in PAGES:
        for number, line in prose_lines(page):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue                          # https:, mailto:
                path, _, anchor = target.partition("#")
                destination = (page.parent / path).resolve() if path else page
                if not destination.exists():
                    broken.append(f"{page.relative_to(ROOT)}:{number}: {target}")
                elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
                    broken.append(f"{page.relative_to(ROOT)}:{number}: {target} (no such heading)")
    assert broken == []


def _anchors(page):
    """GitHub's heading anchors: lower case, punctuation but hyphens and underscores dropped, spaces to -."""
    headings = [line.lstrip("#").strip() for _, line in prose_lines(page) if re.match(r"#{1,6} ", line)]
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_the_readme_is_a_five_minute_read():
    words = len(README.read_text(encoding="utf-8").split())       # as `wc -w` counts, code blocks included
    assert words < README_MOST_WORDS


def test_no_line_of_prose_is_over_120_characters():
    """Code blocks aside (a command or its output is shown whole). A table row in docs/ is let through: Markdown
    cannot wrap one, and a reference table's cells say more than the README's and CONTRIBUTING.md's may."""
    long = [f"{page.relative_to(ROOT)}:{number}: {len(line)} characters" for page in PAGES
            for number, line in prose_lines(page) if len(line) > LONGEST_LINE
            and not (page.parent.name == "docs" and line.lstrip().startswith("|"))]
    assert long == []


def test_every_test_a_page_names_exists():
    """`tests/test_x.py::test_name` in a page is a promise kept by that test: it must still be there."""
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for reference in sorted(set(re.findall(r"tests/[\w/]+\.py(?:::\w+)?", text))):
            missing += [f"{page.relative_to(ROOT)}: {problem}" for problem in _test_reference_problems(reference)]
    assert missing == []


# --- Running a page's commands for real ---------------------------------------------------------------------

def _scratch_course(tmp_path):
    """A copy of the course, and a home folder, holding every file the pages' commands name."""
    course, home = copy_course(tmp_path / "queens"), tmp_path / "home"
    for name in ("requirements-student.txt", "environment.yml"):       # the student bundle holds them
        shutil.copy(ROOT / name, course / name)
    (home / "Downloads").mkdir(parents=True)
    canvas_zip(home / "Downloads" / "submissions.zip", "n-queens", **FIRST_CLASS)
    canvas_zip(course / "n-queens-submissions.zip", "n-queens", **SEMESTER_CLASS)
    (course / "export.csv").write_text(CANVAS_ROSTER, encoding="utf-8")
    return course, home


def _as_run_here(argv, home):
    """The argument list to run: our programs from this interpreter, `~` in the scratch home."""
    program, args = argv[0], [str(home) + word[1:] if word.startswith("~/") else word for word in argv[1:]]
    if Path(program).name in ("autograder", "nqueens"):
        return [sys.executable, "-m", Path(program).name, *args]
    assert shutil.which(program), f"{program} is not on this machine"
    return [program, *args]


def _normalized(text):
    return " ".join(re.sub(r"\[\d+(\.\d+)? s\]", "[N s]", text).split())


def missing_output(shown, printed):
    """The lines shown under a command that it did not print. `...` (or `…`) marks what the page trimmed."""
    printed = _normalized(printed)
    missing = []
    for line in shown:
        if line.strip() in ("", "...", "…", "^C") or line.startswith(MACHINE_LINES):
            continue
        fragments = [part.strip() for part in re.split(r"\.\.\.|…", _normalized(line)) if part.strip()]
        if not all(fragment in printed for fragment in fragments):
            missing.append(line)
    return missing


def test_missing_output_finds_a_line_the_command_did_not_print():
    printed = "graded 4 hand-in(s)\ncompared 3 of 4 hand-ins [0.2 s]\nleetrent_1004_5004_n-… is not"
    assert missing_output(["graded 4 hand-in(s)", "compared 3 of 4 hand-ins [1.7 s]", "leetrent_1004_5004_n-… is not",
                           "...", "graded 4 ... hand-in(s)"], printed) == []
    assert missing_output(["graded 5 hand-in(s)"], printed) == ["graded 5 hand-in(s)"]


def test_every_command_listed_to_run_is_on_its_page():
    shown = {(str(item.page.relative_to(ROOT)), item.command) for item in all_shown()}
    assert [(page, command) for page, commands in RUN.items() for command in commands
            if (page, command) not in shown] == []


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(RUN))
def test_the_commands_a_page_shows_run_and_print_what_it_shows(page, tmp_path):
    course, home = _scratch_course(tmp_path)
    env = {**os.environ, "HOME": str(home), "COLUMNS": "100", "NO_COLOR": "1"}
    ran, wrong = 0, []
    for item in console_commands(ROOT / page):
        if item.command not in RUN[page]:
            continue
        [argv] = simple_commands(item.command)
        done = subprocess.run(_as_run_here(argv, home), cwd=course, env=env, capture_output=True, text=True,
                              timeout=600)
        ran += 1
        if done.returncode != 0:
            wrong.append(f"{item}: exit {done.returncode}: {(done.stdout + done.stderr)[-1500:]}")
        elif RUN[page][item.command] is None:
            wrong += [f"{item}: not printed: {line}" for line in missing_output(item.output, done.stdout + done.stderr)]
    assert ran >= len(RUN[page])
    assert wrong == []
