"""What every command line tool is expected to do: --version, -h, required options said, --quiet, --verbose, --json."""

import json
import shutil

import click
from click.testing import CliRunner

from autograder.cli.main import main
from conftest import ROOT
import pytest

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)


def every_command(group=main, path=()):
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from every_command(command, (*path, name))


def test_version_and_help_everywhere():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("autograder, version ")
    for path, command in every_command():
        shown = CliRunner().invoke(main, [*path, "-h"])
        assert shown.exit_code == 0, (path, shown.output)
        for option in command.params:
            if isinstance(option, click.Option) and option.required:
                line = next(line for line in shown.output.splitlines() if option.opts[-1] in line)
                block = shown.output[shown.output.index(line):].split("\n  -")[0]
                assert "[required]" in block, (path, option.opts)


def test_the_semester_verbs_are_there_with_json():
    for path in (("grade",), ("roster",), ("adjust",), ("gradebook",)):
        assert "--json" in CliRunner().invoke(main, [*path, "-h"]).output, path


def test_quiet_and_verbose_contradict():
    result = CliRunner().invoke(main, ["--quiet", "--verbose", "roster"])
    assert result.exit_code == 2 and "contradict" in result.output


def test_grade_json_quiet_and_verbose(tmp_path):
    hand_in = tmp_path / "alice.ipynb"
    shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", hand_in)
    out = tmp_path / "out"
    as_json = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                                        "--out", str(out), "--json", str(hand_in)])
    assert as_json.exit_code == 0, as_json.output
    document = json.loads(as_json.stdout)             # stdout holds the JSON document and nothing else
    assert [(r["student"], r["score"]) for r in document["rows"]] == [("alice", 5.0)]
    quiet = CliRunner().invoke(main, ["--course", str(ROOT), "--quiet", "grade", "--assignment",
                                                      "n-queens", "--out", str(out), str(hand_in)])
    assert quiet.exit_code == 0 and "Grades" not in quiet.stdout and "isolation" not in quiet.stderr
    assert "graded 0 hand-in(s)" in quiet.stdout and "note:" not in quiet.stderr
    verbose = CliRunner().invoke(main, ["--course", str(ROOT), "--verbose", "grade", "--assignment",
                                                        "n-queens", "--out", str(out), "--regrade", str(hand_in)])
    assert verbose.exit_code == 0 and "[1/1] alice: 5 / 5 graded" in verbose.stderr


@pytest.mark.slow
def test_a_verb_loads_only_what_it_needs():
    """Every test and every user's `autograder grade` starts a Python: it must not pay for matplotlib, openpyxl
    and the audit, which only `report`, `gradebook` and `audit` use (a second of CPU at each start)."""
    import subprocess
    import sys

    probe = ("import sys; from autograder.cli.main import main, Verbs; import click; "
             "main.get_command(click.Context(main), 'grade'); "
             "print(' '.join(m for m in ('matplotlib', 'openpyxl', 'autograder.audit', 'autograder.feedback') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []
