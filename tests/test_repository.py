"""The repository's own promises: pins in one place, README commands, CI."""

import re
import tomllib

from conftest import ROOT


def pyproject_pins():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]


def environment_pins():
    text = (ROOT / "environment.yml").read_text()
    return re.findall(r"^\s+- ([A-Za-z0-9_.\-\[\]]+==[^\s#]+)\s*$", text, re.MULTILINE)


def test_environment_yml_names_the_same_pins_as_pyproject():
    assert sorted(environment_pins()) == sorted(pyproject_pins())
    assert all("==" in pin for pin in pyproject_pins()), "every dependency is pinned"


def test_readme_opens_with_the_demo_and_test_commands():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```(?:console|sh|bash)?\n(.*?)```", readme, re.S).group(1)
    assert [line.strip() for line in first_block.strip().splitlines()] == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command_and_the_staleness_check():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    assert "autograder build --check" in ci
