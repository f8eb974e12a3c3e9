"""The similarity page and `--json` cost about what the comparison does: a class of 400, its passes counted.

Issue 43: the data behind the page built its "alone" list with `i not in dict(self.nearest())` inside the
comprehension, one pass over every pair per document: 374 s for the page at 1,003 hand-ins against 18.5 s of
comparison.  The comparison makes each pair once; writing the page, or the JSON, may read them a few times
over, never once per document.  Judged by counting the pairs read, never by the clock
(benchmarks/similarity_speed.py has the seconds).
"""

import json
import subprocess
import sys

import pytest

from autograder.core.assignment import load_assignment
from autograder.core.course import load_course
from autograder.similarity import compare_class, write_page
from autograder.similarity.report import SimilarityResult
from conftest import ROOT
from similarity_class import gradebook_of, make_class

PASSES = 4      # what the page may read of the pairs: nearest, the count above the line, the look-up, the top


class CountedPairs(list):
    """The ranked pairs, counting every pair read: by iterating, by index, by a slice."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.read = 0

    def __iter__(self):
        for pair in super().__iter__():
            self.read += 1
            yield pair

    def __getitem__(self, index):
        got = super().__getitem__(index)
        self.read += len(got) if isinstance(index, slice) else 1
        return got


@pytest.fixture(scope="module")
def class_of_400(tmp_path_factory):
    root = tmp_path_factory.mktemp("class400")
    nqueens = load_assignment(load_course(ROOT), "n-queens")
    make_class(root / "in", 400)
    gradebook_of(root / "in", root / "out", nqueens)
    return compare_class(nqueens, root / "out"), root / "out"


def counted(result, monkeypatch):
    result.pairs = CountedPairs(result.pairs)
    calls = []
    nearest = SimilarityResult.nearest
    monkeypatch.setattr(SimilarityResult, "nearest", lambda self: calls.append(1) or nearest(self))
    return result.pairs, calls


@pytest.mark.slow
def test_a_class_of_400_writes_its_page_reading_each_pair_a_few_times_not_once_per_document(class_of_400,
                                                                                              monkeypatch):
    result, out = class_of_400
    assert len(result.documents) == 403 and len(result.pairs) == 403 * 402 // 2   # the comparison: each pair once
    pairs, nearest_calls = counted(result, monkeypatch)
    write_page(result, out / "similarity.html", "course")
    assert len(nearest_calls) == 1
    assert pairs.read <= PASSES * len(pairs), f"{pairs.read} pairs read for {len(pairs)} pairs"
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert f'"total": {len(pairs)}' in page and page.count('id="pair-') == 50      # the look-up, the top 50


@pytest.mark.slow
def test_its_json_reads_each_pair_a_few_times_too(class_of_400, monkeypatch):
    result, _ = class_of_400
    pairs, nearest_calls = counted(result, monkeypatch)
    data = json.loads(json.dumps(result.data()))
    assert len(nearest_calls) == 1 and pairs.read <= PASSES * len(pairs)
    # Every hand-in has code in common with some other (the same exercise): none alone, each its nearest.
    assert data["alone"] == [] and len(data["nearest"]) == 403 and data["compared"] == 403


@pytest.mark.slow
def test_the_command_starts_without_matplotlib():
    # copydetect's package imports its HTML report, and with it matplotlib.pyplot: 0.8 s of CPU at every start,
    # against the 10% `--json` may take over the comparison.  Its tokenizer is loaded without it.
    code = ("import sys; from autograder.cli import similarity; from autograder.similarity import fingerprints; "
            "assert 'matplotlib' not in sys.modules, 'matplotlib'; "
            "assert not [m for m in sys.modules if m.startswith('copydetect')]; "
            "import copydetect; assert copydetect.CopyDetector and copydetect.utils.winnow; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
