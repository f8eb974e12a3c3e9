"""The nqueens command, through click's test runner and as a real process."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import nqueens
from nqueens import board, three_in_line
from nqueens.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def parse(text: str) -> list[int]:
    """``pos`` from a printed board: the queen's row in each column."""
    rows = [line.split(" ") for line in text.strip("\n").split("\n")]
    assert all(len(row) == len(rows) for row in rows)
    assert all(square in (board.QUEEN, board.EMPTY) for row in rows for square in row)
    return [next(r for r, row in enumerate(rows) if row[c] == board.QUEEN) for c in range(len(rows))]


def check_board(text: str, n: int) -> list[int]:
    lines = text.strip("\n").split("\n")
    assert len(lines) == n
    assert all(line.count(board.QUEEN) == 1 for line in lines)
    pos = parse(text)
    assert board.is_solution(pos)
    return pos


def test_solve_8_prints_a_valid_board():
    result = run("solve", "8")
    assert result.exit_code == 0
    check_board(result.output, 8)


def test_board_orientation_puts_row_0_first():
    assert run("solve", "4").output == "· · ♛ ·\n♛ · · ·\n· · · ♛\n· ♛ · ·\n"  # pos = [1, 3, 0, 2]


@pytest.mark.parametrize("solver", ["backtracking", "bitmask", "sat"])
def test_every_solver_prints_a_valid_board(solver):
    result = run("solve", "10", "--solver", solver)
    assert result.exit_code == 0
    check_board(result.output, 10)


@pytest.mark.parametrize("solver", ["backtracking", "sat"])
def test_no_three_in_line(solver):
    result = run("solve", "7", "--no-three-in-line", "--solver", solver)
    assert (result.exit_code, result.output) == (0, "no solution\n")
    result = run("solve", "9", "--no-three-in-line", "--solver", solver)
    assert not board.has_three_in_line(check_board(result.output, 9))


def test_no_solution_is_a_success():
    result = run("solve", "3")
    assert (result.exit_code, result.output) == (0, "no solution\n")


@pytest.mark.parametrize("solver", ["backtracking", "bitmask", "sat"])
def test_count(solver):
    assert run("solve", "8", "--count", "--solver", solver).output == "92\n"


def test_count_no_three_in_line():
    assert run("solve", "8", "--count", "--no-three-in-line").output == f"{three_in_line.KNOWN_COUNTS[8]}\n"
    assert run("solve", "7", "--count", "--no-three-in-line").output == "0\n"


def test_all_prints_every_solution_between_blank_lines():
    result = run("solve", "6", "--all")
    boards = result.output.strip("\n").split("\n\n")
    assert len(boards) == 4
    assert len({tuple(check_board(text, 6)) for text in boards}) == 4
    assert run("solve", "3", "--all").output == "no solution\n"


def test_debug_logs_to_stderr_only():
    result = CliRunner().invoke(main, ["solve", "12", "--count", "--debug"])
    assert result.stdout == "14200\n"
    assert "subproblems" in result.stderr and "done in" in result.stderr


def test_help_and_version():
    for args in (["--help"], ["solve", "--help"]):
        result = run(*args)
        assert result.exit_code == 0 and "Usage:" in result.output
    assert "--no-three-in-line" in run("solve", "--help").output
    for args in (["--version"], ["solve", "--version"]):
        assert run(*args).output == f"nqueens, version {nqueens.__version__}\n"


def test_version_matches_the_project():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert nqueens.__version__ == project["version"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["solve", "abc"], "Error: N must be a whole number, got 'abc'\n"),
        (["solve", "8.5"], "Error: N must be a whole number, got '8.5'\n"),
        (["solve", "-3"], "Error: N must be at least 1, got -3\n"),
        (["solve", "0"], "Error: N must be at least 1, got 0\n"),
        (
            ["solve", "10" + "0" * 30],
            f"Error: N = 1{'0' * 31} is too large for the bitmask solver to find a solution"
            " (at most 29; --solver sat takes up to 100)\n",
        ),
        (["solve", "19", "--count"], "Error: N = 19 is too large for the bitmask solver to count solutions (at most 18)\n"),
    ],
)
def test_bad_n_is_one_line_on_stderr(args, message):
    result = CliRunner().invoke(main, args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


@pytest.mark.parametrize(
    "args",
    [
        ["solve"],
        ["solve", "8", "--all", "--count"],
        ["solve", "8", "--solver", "bitmask", "--no-three-in-line"],
        ["solve", "8", "--solver", "magic"],
        ["solve", "8", "--bogus"],
        ["unknown"],
    ],
)
def test_usage_errors_exit_2(args):
    result = run(*args)
    assert result.exit_code == 2
    assert "Error:" in result.output and "Traceback" not in result.output


def python_m_nqueens(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "nqueens", *args], capture_output=True, text=True, encoding="utf-8", env=env, timeout=60
    )


def test_python_m_nqueens_solve_8():
    done = python_m_nqueens("solve", "8")
    assert (done.returncode, done.stderr) == (0, "")
    check_board(done.stdout, 8)


@pytest.mark.slow
def test_python_m_nqueens_no_three_in_line_and_errors():
    done = python_m_nqueens("solve", "7", "--no-three-in-line")
    assert (done.returncode, done.stdout) == (0, "no solution\n")
    done = python_m_nqueens("solve", "-5")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", "Error: N must be at least 1, got -5\n")
    done = python_m_nqueens("solve", "12", "--count")
    assert (done.returncode, done.stdout) == (0, "14200\n")


def test_large_counts_use_numba_only_when_it_is_installed(monkeypatch):
    from nqueens import solvers

    monkeypatch.setattr(solvers, "COMPILED_MIN_N", 8)
    result = run("solve", "8", "--count", "--debug")
    assert result.stdout == "92\n"
    try:
        import numba  # noqa: F401
    except ImportError:
        assert "numba is not installed: counting in pure Python" in result.stderr
    else:
        assert "numba-compiled" in result.stderr
