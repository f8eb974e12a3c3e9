"""The other graders' venvs: made without compiling their bytecode ahead, and run so that they write it."""

import os
import subprocess
from pathlib import Path

import pytest

from autograder.export import tools
from conftest import ROOT


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


def test_the_left_out_packages_are_found_by_their_dist_info_however_the_name_is_spelled(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "rfc3987_syntax-1.1.0.dist-info").mkdir()
    (site / "rfc3986_validator-0.1.1.dist-info").mkdir()
    assert tools._installed(tmp_path, "rfc3987-syntax") and tools._installed(tmp_path, "RFC3987.Syntax")
    assert not tools._installed(tmp_path, "rfc3987")
    assert tools.uninstaller(tmp_path)[1:3] in (["pip", "uninstall"], ["uninstall", "--disable-pip-version-check"])


@pytest.mark.peers
def test_a_tool_s_venv_leaves_out_what_only_slows_each_command_and_still_reads_a_notebook():
    """rfc3987-syntax built a grammar in every nbgrader command (1.6 CPU-s): gone, and nbformat still validates."""
    for tool in tools.TOOLS:
        folder = tools.venv_dir(tool, ROOT)
        if not (folder / tools.MARKER).is_file():
            pytest.fail(f"{folder} is missing: run the tests with `make test`, which makes it")
        assert [name for name in tools.LEFT_OUT if tools._installed(folder, name)] == [], tool
    notebook = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"
    done = subprocess.run([tools.python("nbgrader", ROOT), "-c", "import sys, jsonschema, nbformat; "
                           "nbformat.validate(nbformat.read(sys.argv[1], as_version=4)); print('valid')", str(notebook)],
                          capture_output=True, text=True, timeout=120, env=tools.child_env(Path(
                              tools.executable("nbgrader", ROOT)).parent))
    assert done.stdout.strip() == "valid", done.stderr
