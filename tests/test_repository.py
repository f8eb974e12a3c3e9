"""The repository's own promises: README commands, CI (pins: test_environment.py)."""

import re

from conftest import ROOT


def test_readme_opens_with_the_demo_and_test_commands():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```(?:console|sh|bash)?\n(.*?)```", readme, re.S).group(1)
    assert [line.strip() for line in first_block.strip().splitlines()] == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command_and_the_staleness_check():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    assert "autograder build --check" in ci
