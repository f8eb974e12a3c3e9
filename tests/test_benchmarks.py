"""The benchmarks leave the checkout as they found it."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT
from autograder.core.course import load_course

pytestmark = [pytest.mark.slow]


def _benchmark(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.alone      # it makes the checkout's own hidden folders private while it runs
def test_grading_in_the_users_layer_inside_the_benchmark_leaves_the_course_readable(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the users layer needs root")
    course = load_course(ROOT)
    hidden = [course.root / "solutions", course.cases_dir, course.root / ".git", course.root / "README.md"]
    before = {path: path.stat().st_mode & 0o7777 for path in hidden}
    out = Path(tempfile.mkdtemp(prefix="autograder-benchmark-"))   # a worker's user id must reach its folder
    out.chmod(0o755)
    with _benchmark("grade_throughput").course_modes_kept(course):
        done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(ROOT), "grade", "--assignment",
                               "n-queens", "--out", str(out / "out"), "--isolation", "users",
                               str(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb")],
                              capture_output=True, text=True, timeout=300)
        shutil.rmtree(out)
        assert done.returncode == 0, done.stderr[-2000:]
        during = {path: path.stat().st_mode & 0o7777 for path in hidden}
    assert all(mode & 0o077 == 0 for mode in during.values()), during   # the layer really hid them
    assert {path: path.stat().st_mode & 0o7777 for path in hidden} == before
