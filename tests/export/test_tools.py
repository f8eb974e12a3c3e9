"""The other graders' venvs: made without compiling their bytecode ahead, and run so that they write it."""

import os
from pathlib import Path

from autograder.export import tools


def test_a_tool_s_venv_is_installed_without_compiling_all_its_bytecode(tmp_path):
    command = tools.installer(tmp_path / ".venv-otter")
    assert "--compile-bytecode" not in command
    assert command[-1] != "--compile"
    if Path(command[0]).name == "pip":
        assert "--no-compile" in command


def test_a_tool_runs_with_its_venv_first_and_may_write_the_bytecode_of_what_it_imports(tmp_path):
    environ = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "/elsewhere", "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/h"}
    env = tools.child_env(tmp_path / "bin", environ)
    assert env["PATH"] == f"{tmp_path / 'bin'}{os.pathsep}/usr/bin:/bin"
    assert "PYTHONPATH" not in env and "PYTHONDONTWRITEBYTECODE" not in env
    assert env["HOME"] == "/h"
    assert environ["PYTHONDONTWRITEBYTECODE"] == "1"      # the caller's own environment is left as it was
