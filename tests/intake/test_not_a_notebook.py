"""Files that are not a notebook say what they are, and a notebook in another encoding is read (issue 41, item 4).

Each file is made as the client that makes it in real life makes it: GitHub's page saved from the browser, the
pointer git-lfs leaves in a clone without `git lfs pull`, git's own merge of two edits of one cell, and Windows
PowerShell 5.1's `>` (UTF-16 with its byte order mark, CRLF line ends).  Each was "not valid JSON" or "damaged
(NUL bytes)"; a reason with one certain diagnosis says it, and what to do.
"""

import csv
import hashlib
import os
import subprocess

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.intake.cells import SubmissionError, parse
from conftest import ROOT

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

ALICE = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"

# The start of GitHub's page for a notebook (github.com/<owner>/<repo>/blob/main/n-queens.ipynb), as a browser's
# File → Save Page As writes it: the page that renders the notebook, not the notebook.
GITHUB_PAGE = """<!DOCTYPE html>
<html
  lang="en"
  data-color-mode="auto" data-light-theme="light" data-dark-theme="dark"
  data-a11y-animated-images="system" data-a11y-link-underlines="true"
  >
  <head>
    <meta charset="utf-8">
  <link rel="dns-prefetch" href="https://github.githubassets.com">
  <title>n-queens/n-queens.ipynb at main · student/n-queens · GitHub</title>
  <meta name="route-pattern" content="/:user_id/:repository/blob/*name(/*path)" data-turbo-transient>
  </head>
  <body class="logged-in env-production page-responsive" style="word-wrap: break-word;">
  <react-app app-name="react-code-view" initial-path="/student/n-queens/blob/main/n-queens.ipynb">
  </react-app>
  </body>
</html>
"""


def git(folder, *args):
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.edu",
                               "GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@example.edu",
                               "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)})


def lfs_pointer(data):
    """What git-lfs keeps in a clone in place of a file it stores (its spec, v1)."""
    return (f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(data).hexdigest()}\n"
            f"size {len(data)}\n").encode()


def merge_conflict(folder):
    """A notebook whose cell two branches changed differently, as `git merge` leaves it."""
    repo = folder / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    notebook = repo / "n-queens.ipynb"
    text = ALICE.read_text()
    notebook.write_text(text)
    git(repo, "add", "n-queens.ipynb")
    git(repo, "commit", "-qm", "start")
    git(repo, "checkout", "-qb", "laptop")
    notebook.write_text(text.replace("return len(get_solutions(n))", "return len(list(get_solutions(n)))"))
    git(repo, "commit", "-qam", "on the laptop")
    git(repo, "checkout", "-q", "main")
    notebook.write_text(text.replace("return len(get_solutions(n))", "return sum(1 for _ in get_solutions(n))"))
    git(repo, "commit", "-qam", "in Colab")
    merged = git(repo, "merge", "laptop")
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout, merged.stdout
    return notebook.read_bytes()


def powershell_utf16(data):
    """`Get-Content n-queens.ipynb > copy.ipynb` in Windows PowerShell 5.1: each line re-written with CRLF, in
    UTF-16 little-endian after its byte order mark (Out-File's default, "Unicode")."""
    lines = data.decode("utf-8").splitlines()
    return b"\xff\xfe" + "".join(line + "\r\n" for line in lines).encode("utf-16-le")


def test_each_file_that_is_not_a_notebook_says_what_it_is_and_what_to_do(tmp_path):
    raw = ALICE.read_bytes()
    cases = {"page.ipynb": (GITHUB_PAGE.encode(), "web page (HTML)", "Download raw file"),
             "pointer.ipynb": (lfs_pointer(raw), "Git LFS pointer", "git lfs pull"),
             "merged.ipynb": (merge_conflict(tmp_path), "merge-conflict markers", "Keep one side")}
    for name, (data, what, to_do) in cases.items():
        with pytest.raises(SubmissionError) as refused:
            parse(data, name)
        assert refused.value.status == "invalid-notebook"
        assert what in str(refused.value) and to_do in str(refused.value), str(refused.value)
        assert "not valid JSON" not in str(refused.value)
    with pytest.raises(SubmissionError, match="not valid JSON"):
        parse(b'{"cells": [', "cut.ipynb")        # a file cut short has no such certain diagnosis


def test_a_notebook_that_only_quotes_conflict_markers_is_read_as_a_notebook():
    quoted = ALICE.read_text().replace("return len(get_solutions(n))",
                                       "return len(get_solutions(n))\\n# <<<<<<< HEAD\\n# =======\\n# >>>>>>> x")
    assert parse(quoted.encode(), "quoting.ipynb").cells


@pytest.mark.slow
def test_a_utf16_notebook_from_powershell_is_graded_with_a_note_and_the_others_get_their_reason(tmp_path):
    raw = ALICE.read_bytes()
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "utf16.ipynb").write_bytes(powershell_utf16(raw))
    (folder / "page.ipynb").write_bytes(GITHUB_PAGE.encode())
    (folder / "pointer.ipynb").write_bytes(lfs_pointer(raw))
    (folder / "merged.ipynb").write_bytes(merge_conflict(tmp_path))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens", "--out", str(out),
                                       str(folder)])
    assert result.exit_code == 0, result.output
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert (rows["utf16"]["score"], rows["utf16"]["status"]) == ("5", "graded"), rows["utf16"]
    assert "UTF-16" in rows["utf16"]["message"] and "NUL" not in rows["utf16"]["message"]
    for student, words in (("page", "web page"), ("pointer", "Git LFS pointer"), ("merged", "merge-conflict")):
        assert rows[student]["status"] == "invalid-notebook" and words in rows[student]["message"], rows[student]
