"""`autograder export nbgrader`: a course folder nbgrader 0.9 really accepts."""

import json
import subprocess

import nbformat
import pytest
from click.testing import CliRunner

from autograder.export import handins, tools
from autograder.export import nbgrader as nbgrader_export
from autograder.cli.export import export
from autograder.notebook.preprocessors.stub_solutions import stub_source
from conftest import ROOT, engines

EXAMPLES = ROOT / "examples" / "n-queens" / "submissions"


@pytest.fixture(scope="module")
def generated(tmp_path_factory, course, nqueens):
    try:
        tools.executable("nbgrader", ROOT)
    except tools.ToolError as error:
        pytest.fail(str(error))
    out = tmp_path_factory.mktemp("nbgrader")
    result = CliRunner().invoke(export, ["--course", str(ROOT), "nbgrader", "--assignment", "n-queens",
                                         "--to", str(out)])
    assert result.exit_code == 0, result.output
    nbgrader, env, release = engines.nbgrader_course(course, nqueens, out)
    return out, nbgrader, env, release


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


@pytest.mark.peers
def test_source_notebook_has_grade_and_solution_cells(generated, nqueens):
    out, *_ = generated
    source = nbformat.read(out / "source" / "n-queens" / nqueens.notebook, as_version=4)
    grade_cells = [c for c in source.cells if nbgrader_meta(c).get("grade")]
    assert len(grade_cells) == len(nqueens.cases)
    assert sum(nbgrader_meta(c)["points"] for c in grade_cells) == pytest.approx(nqueens.max_score)
    assert all(nbgrader_meta(c)["locked"] for c in grade_cells)
    solutions = [c for c in source.cells if nbgrader_meta(c).get("solution")]
    assert solutions and all("### BEGIN SOLUTION" in c.source for c in solutions)
    hidden = [c for c in grade_cells if "### BEGIN HIDDEN TESTS" in c.source]
    # A hidden case, and a public case whose hidden twins nbgrader judges in hidden tests (core/assignment.py)
    hidden_ones = {c.name for c in nqueens.hidden_cases}
    assert len(hidden) == len([c for c in nqueens.cases if c.name in hidden_ones or set(c.requires) & hidden_ones])
    mapping = json.loads((out / "autograder-cases.json").read_text())["n-queens"]["cells"]
    assert sorted(mapping.values()) == sorted(c.name for c in nqueens.cases)


@pytest.mark.peers
def test_config_sets_our_stub_and_the_hidden_test_delimiters(generated):
    out, *_ = generated
    config = (out / "nbgrader_config.py").read_text()
    assert "c.ClearSolutions.code_stub" in config and "BEGIN YOUR CODE" in config
    assert "c.ClearHiddenTests.begin_test_delimeter = 'BEGIN HIDDEN TESTS'" in config
    assert "begin_stub_delimeter" not in config   # no such nbgrader option


@pytest.mark.peers
def test_generate_assignment_gives_our_student_notebook_stubs(generated, nqueens):
    _, _, _, release = generated
    stub = stub_source("### BEGIN SOLUTION\n### END SOLUTION")
    text = "\n".join(c.source for c in release.cells)
    assert "### BEGIN SOLUTION" not in text and stub.splitlines()[1] in text
    for case in nqueens.hidden_cases:
        assert case.call.text not in text, case.name
    for case in nqueens.public_cases:
        assert repr(case.call.text) in text, case.name
    student = nbformat.read(nqueens.student_path, as_version=4)
    ours = {c.id: c.source for c in student.cells if c.cell_type == "code" and "BEGIN YOUR CODE" in c.source}
    theirs = {c.id: c.source for c in release.cells if nbgrader_meta(c).get("solution")}
    assert ours == theirs


@pytest.mark.peers
def test_autograde_scores_hand_ins_as_expected(peer_class_grades):
    # `nbgrader autograde` of the example class, which the engines' agreement test reads too
    verdicts = peer_class_grades("nbgrader", "n-queens")
    scores = {s: verdicts[s].score() for s in ("alice", "frank", "grace", "judy", "walter")}
    # grace prints to stdout and stderr inside her functions: the check swallows it, as ours does
    assert scores == pytest.approx({"alice": 5, "frank": 0.95, "grace": 5, "judy": 0, "walter": 5})


@pytest.mark.peers
def test_a_hand_in_becomes_the_release_with_the_students_cells(generated, nqueens):
    _, _, _, release = generated
    handin = handins.read_handin(EXAMPLES / "peggy.ipynb")
    submission = nbgrader_export.as_submission(release, handin)
    ids = [c.get("id") for c in submission.cells]
    assert len(ids) == len(set(ids))
    grade_ids = [nbgrader_meta(c)["grade_id"] for c in submission.cells if nbgrader_meta(c).get("grade")]
    assert grade_ids == [nbgrader_meta(c)["grade_id"] for c in release.cells if nbgrader_meta(c).get("grade")]
    assert "while True" in submission.cells[-1].source       # her own last cell stays last
    solved = {c.id: c.source for c in handin.cells if c.cell_type == "code"}
    for cell in submission.cells:
        if nbgrader_meta(cell).get("solution"):
            assert cell.source == solved[cell.id]


@pytest.mark.peers
def test_a_py_hand_in_is_matched_by_the_names_it_defines(generated):
    _, _, _, release = generated
    submission = nbgrader_export.as_submission(release, handins.read_handin(EXAMPLES / "walter.py"))
    solutions = [c for c in submission.cells if nbgrader_meta(c).get("solution")]
    assert solutions and all("NotImplementedError" not in c.source for c in solutions)


@pytest.mark.peers
def test_nbgrader_validates_the_source_notebook(generated):
    out, nbgrader, env, _ = generated
    done = subprocess.run([nbgrader, "validate", str(out / "source" / "n-queens" / "n-queens.ipynb")],
                          capture_output=True, text=True, env=env, cwd=out)
    assert "Success! Your notebook passes all the tests." in done.stdout, done.stdout + done.stderr
