"""The semester tests' command line (tests/forked_cli.py) is what `python -m autograder` is: the same exit status and
text, and the caller's cwd and environment at the time of each call, with nothing carried from one call to
the next."""

import subprocess
import sys

import pytest

import forked_cli


def new_interpreter(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


@pytest.mark.parametrize("args", [
    ("--version",),
    ("--help",),
    ("no-such-verb",),                                    # a usage error: exit status 2
    ("--quiet", "--verbose", "roster", "show"),            # the group's own error
    ("--course", "/nonexistent/course", "gradebook", "--to", "x"),
])
def test_a_call_gives_what_a_new_interpreter_gives(args, tmp_path):
    forked = forked_cli.run(*args)
    fresh = new_interpreter(*args)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_a_call_whose_interpreter_start_variables_differ_runs_as_a_new_interpreter(monkeypatch, tmp_path):
    """PYTHONPATH (and PYTHON*, the locale) are read as an interpreter starts, so a server started without them
    cannot honour them: such a call is not served by it."""
    forked_cli.run("--version")                                   # the server runs, without this PYTHONPATH
    (tmp_path / "sitecustomize.py").write_text("import sys\nprint('sitecustomize ran', file=sys.stderr)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    done = forked_cli.run("--version")
    assert done.returncode == 0 and "sitecustomize ran" in done.stderr, done.stderr


def test_each_call_has_the_callers_cwd_and_environment_then(course_copy, tmp_path, monkeypatch):
    roster = tmp_path / "roster.csv"
    roster.write_text("First name,Last name,Email address,ID number\nAlice,Smith,alice@uni.example,S1001\n")
    monkeypatch.chdir(tmp_path)
    done = forked_cli.run("--course", course_copy, "roster", "import", "roster.csv")   # relative to the cwd
    assert done.returncode == 0, done.stdout + done.stderr
    wide = forked_cli.run("--help").stdout
    monkeypatch.setenv("COLUMNS", "40")                 # read when the call runs, as a new process reads it
    narrow = forked_cli.run("--help").stdout
    assert narrow != wide and narrow == new_interpreter("--help").stdout


def test_nothing_one_call_does_in_memory_reaches_the_next():
    first = forked_cli.run("--course", "/nonexistent", "gradebook", "--to", "x")
    again = forked_cli.run("--course", "/nonexistent", "gradebook", "--to", "x")
    assert (first.returncode, first.stdout, first.stderr) == (again.returncode, again.stdout, again.stderr)
    assert first.returncode != 0


def test_an_environment_larger_than_one_read_reaches_the_call(monkeypatch):
    for number in range(3):                 # several reads of the server's socket (one variable is at most 128 KiB)
        monkeypatch.setenv(f"AUTOGRADER_TEST_FILLER_{number}", "x" * 100_000)
    monkeypatch.setenv("COLUMNS", "40")
    assert forked_cli.run("--help").stdout == new_interpreter("--help").stdout
