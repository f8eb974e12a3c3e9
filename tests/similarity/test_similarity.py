"""`autograder similarity`: a class of 200 converging hand-ins with planted copies, ranked as the issue says.

tests/similarity_class.py writes the class; it is graded for real (each hand-in must score 5 / 5, and the
gradebook keeps its code), then compared.  Smaller tests: the template and names are left out, past
classes and published solutions are compared, nothing reaches a student's page or an LMS file.
"""

import json
import shutil
import sqlite3

import nbformat
import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.core.assignment import load_assignment
from autograder.core.course import load_course
from autograder.similarity import compare_class
from autograder.similarity.ranking import weights
from browser.chromium import OVERFLOWS, SCREENS, browser_page
from browser.classes import graded_example_class
from conftest import ROOT
from similarity_class import make_class, notebook_of, honest

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

EXAMPLES = ROOT / "examples" / "n-queens" / "submissions"


def cli(*args):
    result = CliRunner().invoke(main, ["--course", str(ROOT), *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def grade(folder, out):
    return cli("--quiet", "grade", "--assignment", "n-queens", "--out", out, folder)


@pytest.fixture(scope="module")
def nqueens():
    return load_assignment(load_course(ROOT), "n-queens")


@pytest.fixture(scope="module")
def big_class(tmp_path_factory):
    """The class of 200 and its three planted copies, graded; (out folder, students, plants)."""
    root = tmp_path_factory.mktemp("class200")
    students, plants = make_class(root / "in", 200)
    grade(root / "in", root / "out")
    return root / "out", students, plants


@pytest.mark.slow
def test_every_honest_hand_in_scores_full_marks_and_keeps_its_code(big_class):
    out, students, plants = big_class
    with sqlite3.connect(out / "gradebook.db") as db:
        rows = db.execute("SELECT student, score, status, message FROM submissions WHERE counted = 1").fetchall()
        kept = db.execute("SELECT COUNT(DISTINCT sha256) FROM handin_code").fetchone()[0]
    assert len(rows) == 203 and {(score, status) for _, score, status, _ in rows} == {(5.0, "graded")}
    assert not [r for r in rows if r[3]]                # no cell failed either
    assert kept == 203


@pytest.mark.slow
def test_the_planted_copies_rank_above_every_honest_pair_whose_code_differs(big_class, nqueens):
    out, students, plants = big_class
    result = compare_class(nqueens, out, top=0)
    keys = [d.key for d in result.documents]
    choices = {s.name: s.choices for s in students}
    rank = {frozenset((keys[p.a], keys[p.b])): p.rank for p in result.pairs}
    assert len(result.pairs) == 203 * 202 // 2          # every pair shares something (the same exercise)
    differing = [p.rank for p in result.pairs if keys[p.a] in choices and keys[p.b] in choices
                 and choices[keys[p.a]] != choices[keys[p.b]]]
    first_differing = min(differing)
    renamed, reordered, one_function = plants
    for plant in (renamed, reordered):
        assert rank[frozenset((plant.name, plant.source))] < first_differing, plant
    # Above them only honest pairs that chose the very same variant for every stub.
    above = [p for p in result.pairs if p.rank < max(rank[frozenset((p.name, p.source))] for p in plants[:2])]
    assert all(choices.get(keys[p.a]) == choices.get(keys[p.b]) for p in above
               if keys[p.a] in choices and keys[p.b] in choices)
    # The single copied function: what the page shows of it (docs/integrity.md quotes it).
    print(f"one copied function: {one_function.name} and {one_function.source} rank "
          f"#{rank[frozenset((one_function.name, one_function.source))]} of {len(result.pairs)}")


def test_rare_code_weighs_more_than_code_many_share():
    """Two hand-ins sharing a passage only they have rank above two sharing a longer one that eight have,
    as MOSS ignores passages common to many documents; with every fingerprint weighing the same, the
    longer common passage would win."""
    from autograder.similarity.documents import Document
    from autograder.similarity.fingerprints import fingerprint
    from autograder.similarity.ranking import rank_pairs

    def code(seed, lines):
        return "\n".join(f"value_{seed}_{i} = compute({seed * 100 + i}, {i * 7 + seed})" for i in range(lines))

    rare, common = code(1, 10), code(2, 12)
    documents = []
    for number in range(12):
        parts = [code(100 + number, 10)]                      # each student's own code
        if number < 8:
            parts.append(common)                             # eight students share this passage
        if number in (10, 11):
            parts.append(rare)                               # two share this shorter one
        document = Document(f"s{number}", f"s{number}", "class")
        document.pieces = [fingerprint("cell", str(i), text) for i, text in enumerate(parts)]
        documents.append(document)

    def first(weight):
        top = rank_pairs(documents, weight, lambda i, j: True)[0]
        return {documents[top.a].key, documents[top.b].key}

    weighted = weights(documents)
    assert first(weighted) == {"s10", "s11"}
    assert first({h: 1.0 for h in weighted}) <= {f"s{n}" for n in range(8)}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("screen", SCREENS)
def test_the_page_fits_and_shows_where_the_single_copied_function_ranks(big_class, nqueens, screen):
    out, _, plants = big_class
    cli("similarity", "--out", out)
    page_path = out / "similarity.html"
    one_function = plants[2]
    result = compare_class(nqueens, out, top=0)
    keys = [d.key for d in result.documents]
    expected = next(p for p in result.pairs if {keys[p.a], keys[p.b]} == {one_function.name, one_function.source})
    with browser_page(SCREENS[screen], device_scale_factor=1) as page:
        page.goto(page_path.as_uri())
        found = page.evaluate(OVERFLOWS)
        assert found["bad"] == [] and found["scrollWidth"] <= found["width"], found
        text = page.inner_text("body")
        assert "not whether anyone copied" in text and "A person decides" in text
        assert page.locator("hr.threshold").count() == 1 and page.locator("details.pair").count() == 50
        # The first two pairs are the planted copies, their code side by side with what they share marked.
        first = page.locator("details.pair").first
        assert plants[0].source in first.inner_text() or plants[1].source in first.inner_text()
        assert first.locator("mark").count() > 0 and "cell" in first.locator("h4").first.inner_text()
        page.select_option("#lookup-a", label=one_function.name)
        page.select_option("#lookup-b", label=one_function.source)
        shown = page.inner_text("#lookup-result")
        assert f"pair #{expected.rank} of {len(result.pairs)}" in shown, shown
        page.screenshot(path=str(out / f"similarity-{screen}.png"), full_page=False)


def _small_class(folder, count=12, seed=5):
    import random
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    students = [honest(rng, f"p{n:02d}") for n in range(count)]
    for student in students:
        nbformat.write(notebook_of(student), folder / f"{student.name}.ipynb")
    return students


@pytest.mark.slow
def test_the_template_names_and_layout_are_left_out(tmp_path, nqueens):
    folder = tmp_path / "in"
    students = _small_class(folder, 6)
    # The untouched template, and a hand-in that is another's with every name changed and its lines
    # spaced out: the template has nothing of its own; the renamed one matches its source entirely.
    shutil.copy(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", folder / "blank.ipynb")
    source = nbformat.read(folder / f"{students[0].name}.ipynb", as_version=4)
    for cell in source.cells:
        if cell.cell_type == "code" and cell.id in ("get-n", "board2str", "is-solved"):
            cell.source = (cell.source.replace("pos", "position").replace("rows", "queens")
                           .replace(" = ", "   =   ").replace("\n", "\n\n"))
    nbformat.write(source, folder / "twin.ipynb")
    grade(folder, tmp_path / "out")
    result = compare_class(nqueens, tmp_path / "out", top=0)
    by_key = {d.key: d for d in result.documents}
    assert not by_key["blank"].pieces and "every line is the template's" in by_key["blank"].note
    top = result.pairs[0]
    assert {result.documents[top.a].key, result.documents[top.b].key} == {students[0].name, "twin"}
    assert top.similarity == 1.0
    # No piece of anyone's document is a cell of the template (the check helpers, the given functions).
    template = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
    template_texts = {c.source.strip() for c in template.cells if c.cell_type == "code"}
    assert not [p for d in result.documents for p in d.pieces if p.text.strip() in template_texts]
    assert all(p.kind == "cell" and p.name.isdigit() for d in result.documents for p in d.pieces)


@pytest.mark.slow
def test_past_classes_and_a_published_solution_are_compared(tmp_path, nqueens):
    past = tmp_path / "fall-2026" / "grades"
    _small_class(tmp_path / "past-in", 5, seed=11)
    grade(tmp_path / "past-in", past)
    now = tmp_path / "in"
    students = _small_class(now, 5, seed=12)
    shutil.copy(tmp_path / "past-in" / "p03.ipynb", now / "late-copier.ipynb")     # last year's hand-in
    shutil.copy(EXAMPLES / "alice.ipynb", now / "alice.ipynb")                    # the reference, as is
    grade(now, tmp_path / "out")
    solution = tmp_path / "found-online.py"
    reference = nbformat.read(ROOT / "solutions" / "n-queens" / "n-queens.ipynb", as_version=4)
    solution.write_text("\n\n# %%\n".join(c.source for c in reference.cells if c.cell_type == "code"
                                          and "autograder" not in c.source), encoding="utf-8")
    shown = json.loads(cli("similarity", "--out", tmp_path / "out", "--against", tmp_path / "fall-2026",
                           "--against", solution, "--json").output)
    pairs = {(p["a"], p["b"]): p for p in shown["pairs"]}
    assert pairs[("late-copier", "past:grades:p03")]["similarity"] == 1.0
    assert pairs[("alice", "file:found-online.py")]["similarity"] == 1.0
    assert pairs[("alice", "file:found-online.py")]["b_label"] == "found-online.py"
    # Two documents from elsewhere are never a pair of their own.
    assert not [p for p in shown["pairs"] if ":" in p["a"] and ":" in p["b"]]
    assert shown["documents"] == 7 + 5 + 1 and len(students) == 5


@pytest.mark.slow
def test_a_gradebook_from_before_code_was_kept_says_so(tmp_path, nqueens):
    _small_class(tmp_path / "in", 3)
    grade(tmp_path / "in", tmp_path / "out")
    with sqlite3.connect(tmp_path / "out" / "gradebook.db") as db:
        db.execute("DELETE FROM handin_code")
    shown = json.loads(cli("similarity", "--out", tmp_path / "out", "--json").output)
    assert shown["compared"] == 0 and len(shown["not_compared"]) == 3
    assert all("graded before the gradebook kept code; grade again" in row["why"] for row in shown["not_compared"])
    # Grading again (nothing changed, so nothing is regraded) keeps the code of the hand-ins it skips.
    grade(tmp_path / "in", tmp_path / "out")
    assert json.loads(cli("similarity", "--out", tmp_path / "out", "--json").output)["compared"] == 3


def test_nothing_from_it_reaches_a_student_page_or_an_lms_file(tmp_path):
    out = graded_example_class(tmp_path / "out")     # EXAMPLES, graded once per test session
    said = cli("similarity", "--out", out).output
    assert "wrote" in said and (out / "similarity.html").is_file()
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<script src" not in page and "http" not in page.replace("https://colab", "")  # offline
    cli("feedback", "--out", out)
    cli("release", "--out", out, "--to", tmp_path / "release")
    written = [p for folder in (out / "feedback", tmp_path / "release") for p in folder.rglob("*") if p.is_file()]
    assert written
    for path in written:
        data = path.read_bytes()
        assert b"in common" not in data and b"similarity" not in data.lower(), path
    assert not list((tmp_path / "release").rglob("similarity*"))


def test_a_hand_in_with_nothing_in_common_is_listed_not_left_out(nqueens):
    from autograder.similarity.documents import Document
    from autograder.similarity.fingerprints import fingerprint
    from autograder.similarity.ranking import rank_pairs
    from autograder.similarity.report import SimilarityResult, page_context

    texts = {"ann": "total = sum(value * 3 for value in range(50))\nprint(total, total // 7)",
             "ben": "total = sum(value * 3 for value in range(50))\nprint(total, total // 7)",
             "cy": "while True:\n    break\nelse:\n    raise SystemExit('never here at all, really')"}
    documents = []
    for key, text in texts.items():
        document = Document(key, key, "class")
        document.pieces = [fingerprint("cell", "1", text)]
        documents.append(document)
    weight = weights(documents)
    pairs = rank_pairs(documents, weight, lambda i, j: True)
    result = SimilarityResult(nqueens, documents, pairs, [], 0.8, len(pairs), weight)
    data = result.data()
    assert [n["who"] for n in data["nearest"]] == ["ann", "ben"] and data["alone"] == [{"who": "cy", "label": "cy"}]
    assert [row["label"] for row in page_context(result, "course", "80%")["alone"]] == ["cy"]


def test_a_check_cell_of_the_former_student_notebook_is_the_template_s(nqueens):
    """After a case's points changed and `build` ran, the hand-ins made from the former notebook all hold its
    check cells, which counted as every student's own code (45 pairs instead of 36).  A cell headed like one of
    today's check cells and holding only run_checks of literal values is the template's; one with code of the
    student's in it is not."""
    from autograder.similarity.documents import Template
    template = Template(nqueens)
    notebook = nbformat.read(nqueens.student_path, as_version=4)
    check = next(c.source for c in notebook.cells if "public-check" in c.metadata.get("tags", []))
    assert template.own("cell", "3", check) is None
    former = check.replace('"points": 0.2,', '"points": 0.3,').replace('"limit": 0.25,', '"limit": 0.5,')
    assert former != check and template.own("cell", "3", former) is None
    with_code = former + "\nsolutions = [p for p in range(8) if p % 2]\nprint(sorted(solutions, reverse=True))\n"
    assert template.own("cell", "3", with_code) is not None
    disguised = "# Public checks for get_n(): run this cell after the one above.\nrun_checks([get_n(list(range(9)))])\n"
    assert template.own("cell", "3", disguised + "x = [q * q for q in range(12)]\n") is not None
