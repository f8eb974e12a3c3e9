"""Bidirectional control characters in a student's code or name are shown on every page, never applied (issue 38,
item 7): U+202E in a comment reverses the rest of the line for the reader, so code could read as what it is not
(Trojan Source).  The feedback page, the class report and the similarity page, in headless Chromium.
"""

import nbformat
import pytest
from click.testing import CliRunner
from markupsafe import Markup

from autograder.cli.feedback import feedback_command
from autograder.cli.main import main
from autograder.cli.report import report_command
from autograder.core.folder_names import safe_name
from autograder.core.render import BIDI_CONTROLS, environment, visible_controls
from browser.chromium import DESKTOP, browser_page
from browser.classes import fake_gradebook, run
from conftest import ROOT
from similarity_class import honest, notebook_of

# As Trojan Source writes it: the comment's override makes `if is_admin` read as part of the comment.
TROJAN = "# \u202e } \u2066if is_admin\u2069 \u2066 begin admins only"
NAME = "eve \u202enimda"           # reads "eve admin" where the override is applied


def shown_in_chromium(path):
    """The page's text as a reader's browser lays it out (every <details> opened), and each option's text."""
    with browser_page(DESKTOP) as page:
        page.goto(path.as_uri())
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        return page.inner_text("body") + "\n".join(page.evaluate(
            "() => [...document.querySelectorAll('option')].map(o => o.textContent)"))


def assert_visible_never_applied(path):
    raw = path.read_text(encoding="utf-8")
    assert not [c for c in BIDI_CONTROLS if c in raw], path            # not in the page's bytes, nor its JSON
    text = shown_in_chromium(path)
    assert not [c for c in BIDI_CONTROLS if c in text], path
    assert "⟨U+202E⟩" in text and "⟨U+2066⟩" in text, path
    return text


def test_every_control_is_shown_by_its_code_point_in_text_markup_and_a_script_s_json():
    assert visible_controls("a\u202eb\u2069c\u200fd") == "a⟨U+202E⟩b⟨U+2069⟩c⟨U+200F⟩d"
    assert len(BIDI_CONTROLS) == 12
    page = environment().from_string("{{ a }}|{{ b | tojson }}|{{ c }}").render(
        a="x\u202ey", b={"labels": ["n\u2066m"]}, c=Markup("<mark>q\u202er</mark>"))
    assert page == 'x⟨U+202E⟩y|{"labels": ["n\\u27e8U+2066\\u27e9m"]}|<mark>q⟨U+202E⟩r</mark>'


@pytest.mark.browser
def test_a_control_in_a_name_a_cell_or_an_error_is_shown_on_the_feedback_page_and_the_report(tmp_path):
    out = fake_gradebook(tmp_path / "out", [
        dict(student=NAME, cell_errors=[{"cell": 2, "source": f"x = 1  {TROJAN}\nundefined_name",
                                         "error": "NameError: name 'undefined_name' is not defined"}],
             cases={"get_n([0, 2, 4, 6, 1, 3, 5])": dict(status="error", message="ValueError: \u202eoops\u2066",
                                                         traceback=f"    return 1  {TROJAN}\n")}),
        dict(student="alice")])
    assert run(feedback_command, "--out", out).exit_code == 0
    assert run(report_command, "--out", out).exit_code == 0
    page = out / "feedback" / safe_name(NAME) / "feedback.html"
    text = assert_visible_never_applied(page)
    assert "eve ⟨U+202E⟩nimda" in text and "if is_admin⟨U+2069⟩" in text
    markdown = (out / "feedback" / safe_name(NAME) / "feedback.md").read_text(encoding="utf-8")
    assert not [c for c in BIDI_CONTROLS if c in markdown] and "⟨U+202E⟩" in markdown
    assert "eve ⟨U+202E⟩nimda" in assert_visible_never_applied(out / "report.html")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.usefixtures("one_sandbox_per_process")
def test_a_control_in_code_two_students_share_is_shown_on_the_similarity_page(tmp_path):
    import random
    import shutil
    rng = random.Random(7)
    folder = tmp_path / "in"
    folder.mkdir()
    notebook = notebook_of(honest(rng, "p01"))
    cell = next(c for c in notebook.cells if c.cell_type == "code" and c.source.startswith("def is_solved"))
    cell.source = cell.source.replace("### BEGIN YOUR CODE", f"### BEGIN YOUR CODE\n    {TROJAN}", 1)
    nbformat.write(notebook, folder / "p01.ipynb")
    shutil.copy(folder / "p01.ipynb", folder / "p02.ipynb")          # the two who share it
    nbformat.write(notebook_of(honest(rng, "p03")), folder / "p03.ipynb")
    for args in (["grade", "--assignment", "n-queens", "--out", tmp_path / "out", folder],
                 ["similarity", "--out", tmp_path / "out"]):
        result = CliRunner().invoke(main, ["--course", str(ROOT), "--quiet", *map(str, args)])
        assert result.exit_code == 0, result.output
    assert "if is_admin⟨U+2069⟩" in assert_visible_never_applied(tmp_path / "out" / "similarity.html")
