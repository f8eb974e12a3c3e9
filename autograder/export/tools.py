"""The other graders' command-line tools, each in a throwaway venv of its own.

otter-grader and nbgrader pin versions of Jupyter packages that our own
environment must not be forced to share, so each lives in `.venv-<tool>/` at
the course root, made from the `[project.optional-dependencies]` group of the
same name in pyproject.toml (the one place versions are pinned) plus the
packages a student's notebook imports, held to our pins by .venv/constraints.txt.

    python -m autograder.export.tools install otter     # what `make .venv-otter/.installed` runs
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from ..core import colab
from ..core.errors import AutograderError

TOOLS = {"otter": "otter", "nbgrader": "nbgrader"}   # optional-dependency group -> command
# What the student's kernel needs inside the tool's venv (as in .venv-student): what a notebook of the course
# may import because Colab has it (core/colab.py says why each; pyproject.toml's `student` group pins each), and
# the kernel.
COLAB_PACKAGES = tuple(colab.OFFERED)
KERNEL_PACKAGES = (*COLAB_PACKAGES, "ipykernel")
MARKER = ".installed"
# Left out of every tool's venv once installed.  rfc3987-syntax is jsonschema's checker of the "iri" format, which
# jupyter-events brings (jsonschema[format-nongpl]); it builds an Earley grammar when imported, 1.6 CPU-s, and every
# nbgrader command imports it (nbformat -> jsonschema): about 8 CPU-s of each class nbgrader grades.  No schema
# these tools validate against uses that format (nbformat's use none), so nothing they do changes: each command
# starts that much sooner than in an instructor's own nbgrader, which benchmarks/ says beside its figures.
LEFT_OUT = ("rfc3987-syntax",)


class ToolError(AutograderError):
    """A tool the export or a check needs is not installed."""


def project_root(start=None):
    here = Path(start or Path(__file__)).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    raise ToolError(f"no pyproject.toml at or above {here}")


def requirements(group, root=None):
    """The pinned requirements of an optional-dependency group, e.g. ['otter-grader[grading]==7.0.0']."""
    root = Path(root) if root else project_root()
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    try:
        return list(data["project"]["optional-dependencies"][group])
    except KeyError:
        raise ToolError(f"pyproject.toml has no [project.optional-dependencies] group {group!r}") from None


def pin(group, distribution, root=None):
    """The requirement for `distribution` in a group, extras dropped: 'otter-grader==7.0.0'."""
    for line in requirements(group, root):
        match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(\[[^\]]*\])?\s*(.*)$", line)
        if match and match.group(1).lower() == distribution.lower():
            return match.group(1) + match.group(3).strip()
    return distribution


def venv_dir(tool, root=None):
    return (Path(root) if root else project_root()) / f".venv-{tool}"


def executable(tool, root=None):
    """Path of the tool's command: from its venv if made, else from PATH; ToolError if neither."""
    candidate = venv_dir(tool, root) / "bin" / TOOLS[tool]
    if candidate.is_file() and (venv_dir(tool, root) / MARKER).is_file():
        return str(candidate)
    found = shutil.which(TOOLS[tool])
    if found:
        return found
    raise ToolError(f"{TOOLS[tool]} is not installed: run `make .venv-{tool}/.installed` "
                    f"(or `python -m autograder.export.tools install {tool}`)")


def python(tool, root=None):
    """The Python of the tool's venv (for its Python API)."""
    return str(Path(executable(tool, root)).parent / "python")


def uninstaller(folder):
    """The uninstall command for the venv `folder`, as `installer` chooses its tool."""
    command = installer(folder)
    if Path(command[0]).name == "uv":
        return [command[0], "pip", "uninstall", "--python", str(folder / "bin" / "python")]
    return [str(folder / "bin" / "pip"), "uninstall", "--disable-pip-version-check", "--yes"]


def installer(folder):
    """The install command for the venv `folder`: uv where the grader's own venv has it (the `test` group brings
    it, so `make test` makes these venvs in a fraction of pip's time), else the venv's own pip.  Both take the
    same requirements and constraints.  Neither compiles the whole venv's bytecode ahead: the tools run outside
    any sandbox and write the bytecode of what they import at their first run (`child_env` makes sure they may),
    which is a small part of what the venv holds; compiling it all cost 32 CPU-s of each test run's set-up, per
    tool, against about 6 without."""
    uv = Path(sys.executable).parent / "uv"
    if uv.is_file() and os.access(uv, os.X_OK):
        return [str(uv), "pip", "install", "--python", str(folder / "bin" / "python")]
    return [str(folder / "bin" / "pip"), "install", "--disable-pip-version-check", "--no-compile"]


def child_env(venv_bin, environ=None):
    """The environment to run a tool of the venv `venv_bin` in: its folder first on PATH (nbgrader runs `alembic`
    from PATH), no PYTHONPATH of ours, and bytecode writing on.  The venv was made without its bytecode
    (`installer`); with PYTHONDONTWRITEBYTECODE inherited, every kernel the tool starts would compile numpy and
    sympy again, and a benchmark would time that."""
    env = dict(os.environ if environ is None else environ)
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def install(tool, root=None, python_exe=None, quiet=True):
    """Make .venv-<tool> with the tool and the student kernel's packages; return its folder."""
    root = Path(root) if root else project_root()
    folder = venv_dir(tool, root)
    if (folder / MARKER).is_file():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([python_exe or sys.executable, "-m", "venv", str(folder)], check=True)
    command = installer(folder)
    if quiet:
        command.append("--quiet")
    constraints = root / ".venv" / "constraints.txt"
    if constraints.is_file():
        command += ["-c", str(constraints)]
    command += [*requirements(tool, root), *KERNEL_PACKAGES]
    subprocess.run(command, check=True, env={**os.environ, "PIP_NO_INPUT": "1"})
    present = [name for name in LEFT_OUT if _installed(folder, name)]
    if present:
        subprocess.run([*uninstaller(folder), *(["--quiet"] if quiet else []), *present], check=True,
                       env={**os.environ, "PIP_NO_INPUT": "1"})
    (folder / MARKER).touch()
    return folder


def _installed(folder, distribution):
    """Whether the venv `folder` holds `distribution` (its `<name>-<version>.dist-info`, the name spelled with `_`)."""
    wanted = re.sub(r"[-_.]+", "_", distribution).lower()
    return any(re.sub(r"[-_.]+", "_", path.name.split("-", 1)[0]).lower() == wanted
               for path in folder.glob("lib/python*/site-packages/*.dist-info"))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2 or argv[0] != "install" or argv[1] not in TOOLS:
        print(f"usage: python -m autograder.export.tools install {{{','.join(TOOLS)}}}", file=sys.stderr)
        return 2
    print(install(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
