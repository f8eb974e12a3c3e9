"""An upload's limits, and what stays in --out after grading, in every condition a grader meets (issue 38).

The hostile corpus (tests/hostile/n-queens, graded by test_isolation_layers.py in every condition) holds the
hand-ins whose bytes once ended a run or cost quadratic time: a 4,301-digit integer, a marimo decorator 1,500
attributes deep, a Colab cell of 60,000 blank lines.  Here: a Canvas download in which one student's 1 MB upload
of nested zips would have unpacked 30,036 files, graded by the real command in each condition; the honest
classmate keeps 5, the attacker's own notebook is still graded, one row names what was not unpacked, and
nothing unpacked is left in --out.
"""

import io
import subprocess
import zipfile

import pytest

from conftest import ROOT
from test_isolation_layers import RUNS, _hand_over, _launch, _owned_folder, _rows, _skip_unless_possible
from test_isolation_layers import course, tmp_path  # noqa: F401 - fixtures

pytestmark = [pytest.mark.slow]

ALICE = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"


def _zipped(entries):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, data in entries:
            bundle.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, expect_layer", RUNS, ids=[f"{c}-{l}" for c, l, _ in RUNS])
def test_a_1_mb_upload_of_nested_zips_costs_its_limits_and_nothing_unpacked_stays(tmp_path, course, condition,  # noqa: F811
                                                                                   layer, expect_layer):
    _skip_unless_possible(condition)
    handins = _owned_folder(tmp_path, condition, "handins")
    inner = _zipped([(f"f{n}", b"") for n in range(1000)])
    upload = _zipped([("work/n-queens.ipynb", ALICE.read_bytes())] + [(f"inner{n}.zip", inner) for n in range(30)])
    assert len(upload) < 1024 * 1024
    with zipfile.ZipFile(handins / "submissions.zip", "w") as bundle:
        bundle.writestr("smithalice_1001_5001_work.zip", upload)
        bundle.writestr("jonesbob_1002_5002_n-queens.ipynb", ALICE.read_bytes())
    _hand_over(handins, condition)
    out = _owned_folder(tmp_path, condition, "out")
    grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out", str(out / "g"),
                                 "--isolation", layer, str(handins / "submissions.zip")],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = grader.communicate(timeout=600)
    if "cannot read Python's own files" in output:
        pytest.skip("Python is installed where other users cannot read it (.ci/run makes it readable)")
    assert grader.returncode == 0, output
    assert f"isolation: {expect_layer}" in output, output
    rows = _rows(out / "g" / "grades.csv")
    assert {k: (r["score"], r["status"]) for k, r in rows.items()} == {"canvas:1001": ("5", "graded"),
                                                                       "canvas:1002": ("5", "graded")}
    assert rows["canvas:1001"]["handins"] == "2"          # the notebook, and the row of what was not unpacked
    assert not (out / "g" / "handins").exists(), output
