"""Fuzzing the readers of what a hand-in controls: no input ends a class run (issue 38).

Each reader has a contract: what it returns, and the one exception it may raise, which becomes a hand-in's
row (or, for an LMS's own metadata, one line that refuses the download).  Hypothesis generates inputs of each
kind, structured and mutated: notebook JSON (nbformat 2 to 4), marimo files, `.py` files, Blackboard receipts
and D2L names, Gradescope's YAML, zips with any entry names (raw bytes, with or without the UTF-8 flag,
lying headers, damaged streams), and Canvas downloads of such names read by the whole walker.

    $ AUTOGRADER_FUZZ_EXAMPLES=10000 .venv/bin/python -m pytest -p no:randomly tests/intake/test_fuzz_readers.py

runs 10,000 inputs per reader with a fresh random seed (what the closing note of issue 38 reports); the slow
tier runs a few hundred each, derandomized, so CI is repeatable.  Every input that once ended a run is kept in
`fuzz_corpus/<reader>/` and replayed by `test_the_corpus_of_inputs_that_once_ended_a_run` in every tier.
"""

import io
import json
import os
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.intake import IntakeError, IntakeOptions, collect, receipts, zips
from autograder.intake.cells import SubmissionError, parse

CORPUS = Path(__file__).parent / "fuzz_corpus"
EXAMPLES = int(os.environ.get("AUTOGRADER_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize="AUTOGRADER_FUZZ_EXAMPLES" not in
                os.environ, suppress_health_check=list(HealthCheck))
OPTIONS = IntakeOptions("n-queens", "n-queens.ipynb")
ALICE = Path(__file__).parents[2] / "examples" / "n-queens" / "submissions" / "alice.ipynb"


# --- the contracts ---------------------------------------------------------------------------------------


def read_notebook(raw, name):
    """A notebook or .py hand-in: a Notebook, or SubmissionError (its row)."""
    try:
        parse(raw, name)
    except SubmissionError as error:
        assert error.status and str(error)


def read_receipt(raw):
    """A Blackboard receipt and the times in a download's names: never an exception."""
    found = receipts.read_receipt(raw)
    text = raw.decode("latin-1")
    receipts.blackboard_time(text[:200])
    receipts.blackboard_stamp(text[:40])
    receipts.d2l_time(text[:60])
    assert isinstance(found.files, tuple)


def read_download(folder, unpack_dir):
    """A whole download, read by the walker: hand-ins, or IntakeError (one line: no hand-ins, unreadable
    metadata).  Every hand-in it returns has a key and a source."""
    try:
        intake = collect([folder], unpack_dir, OPTIONS)
    except IntakeError as error:
        assert str(error)
        return
    assert all(h.student and h.source for h in intake.handins)


def read_zip(data, tmp):
    """A zip's entries, unpacked: Unpacked, or UnusableZip (its row)."""
    archive, target = tmp / "a.zip", tmp / "out"
    archive.write_bytes(data)
    target.mkdir()
    try:
        zips.unpack(archive, target, tmp)
    except zips.UnusableZip as error:
        assert error.status and str(error)


# --- what to generate ------------------------------------------------------------------------------------

_KEYS = ["nbformat", "nbformat_minor", "cells", "metadata", "cell_type", "source", "outputs", "tags", "kernelspec",
         "language", "language_info", "name", "worksheets", "input", "autograder", "assignment", "execution_count"]
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=30), st.sampled_from(["code", "markdown", "python", "R", "n-queens", ""]))
_json_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=5), inner, max_size=6)),
    max_leaves=40)


@st.composite
def notebook_json(draw):
    """A notebook-shaped JSON text, sometimes with what JSON allows and Python does not take (a huge integer,
    deep nesting, lone surrogates, NaN)."""
    major = draw(st.sampled_from([4, 4, 3, 2, 1, 5, "4", None]))
    cells = draw(st.lists(st.fixed_dictionaries(
        {"cell_type": st.sampled_from(["code", "markdown", "raw", 5]),
         "source": st.one_of(st.text(max_size=80), st.lists(st.text(max_size=20), max_size=4), _json_values),
         "metadata": st.one_of(st.fixed_dictionaries({"tags": st.lists(_scalars, max_size=3)}), _json_values)},
        optional={"input": st.text(max_size=20), "outputs": _json_values}), max_size=5))
    data = {"nbformat": major, "metadata": draw(st.one_of(_json_values, st.fixed_dictionaries(
        {"kernelspec": st.fixed_dictionaries({"language": _scalars}),
         "language_info": st.fixed_dictionaries({"name": _scalars}),
         "autograder": st.fixed_dictionaries({"assignment": _scalars})})))}
    data["cells" if major != 3 else "worksheets"] = cells if major != 3 else [{"cells": cells}]
    text = json.dumps(data)
    trick = draw(st.sampled_from(["", "bigint", "deep", "surrogate", "nan", "trailing-nul", "bom"]))
    if trick == "bigint":
        text = text.replace('"metadata": ', '"metadata": {"x": ' + "9" * draw(st.integers(4290, 4400)) + '}, "m": ', 1)
    elif trick == "deep":
        depth = draw(st.integers(100, 3000))
        text = text[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
    elif trick == "surrogate":
        text = text.replace('"cells"', '"c\\ud800ells"', 1) if draw(st.booleans()) else text + "\\udfff"
    elif trick == "nan":
        text = text[:-1] + ', "x": NaN, "y": -Infinity}'
    raw = text.encode("utf-8", "surrogatepass")
    if trick == "trailing-nul":
        raw += b"\x00" * draw(st.integers(1, 50))
    elif trick == "bom":
        raw = b"\xef\xbb\xbf" + raw
    return raw


@st.composite
def mutated(draw, base):
    """`base` with a few bytes flipped, cut, repeated or inserted."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 8))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "cut", "insert", "repeat"]))
        if action == "flip":
            data[at] = draw(st.integers(0, 255))
        elif action == "cut":
            del data[at:at + draw(st.integers(1, 64))]
        elif action == "insert":
            data[at:at] = draw(st.binary(max_size=16))
        else:
            data[at:at] = data[at:at + draw(st.integers(1, 16))] * draw(st.integers(1, 50))
    return bytes(data)


_names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).map(
    lambda s: "".join(c for c in s if c.isidentifier() or c.isalnum()) or "x")


@st.composite
def marimo_text(draw):
    """A marimo-like file: its header, then cells whose decorators, bodies and nesting vary."""
    options = draw(st.sampled_from(["", 'width="full"', ")("]))
    parts = ["import marimo\n", f"app = marimo.App({options})\n"]
    for _ in range(draw(st.integers(0, 6))):
        depth = draw(st.sampled_from([0, 1, 2, 3, 50, 1500]))
        dotted = ".".join(["app"] + [draw(_names) for _ in range(depth)] +
                          [draw(st.sampled_from(["cell", "function", "class_definition", "setup", "x"]))])
        call = draw(st.sampled_from(["", "()", "(hide_code=True)", "(", "(*)"]))
        kind = draw(st.sampled_from(["def", "async def", "class", "with", "junk"]))
        body = draw(st.lists(st.sampled_from(["x = 1", "return", "return (x,)", "pass", "f'{x}'", "\tx=2",
                                              "import math", "if x:\n        y = 1", "\\", "'''"]), max_size=4))
        inner = "".join(f"    {line}\n" for line in body) or "    pass\n"
        if kind == "with":
            parts.append(f"with {dotted}{call}:\n{inner}")
        elif kind == "junk":
            parts.append(draw(st.text(max_size=40)) + "\n")
        else:
            parts.append(f"@{dotted}{call}\n{kind} {draw(_names)}():\n{inner}")
    return "".join(parts).encode("utf-8", "surrogatepass")


@st.composite
def py_text(draw):
    head = draw(st.sampled_from(["", "# Databricks notebook source\n", "\ufeff", "# %%\n"]))
    lines = draw(st.lists(st.one_of(st.sampled_from(["# %%", "# COMMAND ----------", "# MAGIC %python",
                                                     "# MAGIC %md", "from google.colab import drive", "",
                                                     "import marimo", "app = marimo.App()"]),
                                    st.text(max_size=40)), max_size=12))
    return (head + "\n".join(lines)).encode("utf-8", "surrogatepass")


@st.composite
def receipt_bytes(draw):
    lines = draw(st.lists(st.one_of(
        st.builds(lambda a, b: f"Name: {a} ({b})", st.text(max_size=30), st.text(max_size=10)),
        st.builds(lambda a: f"Date Submitted: {a}", st.one_of(st.text(max_size=40), st.sampled_from([
            "Tuesday, February 20, 2024 12:35:07 AM CST", "Tuesday, 21 April 2020 06:34:13 o'clock BST",
            "Monday, February 30, 2024 12:35:07 AM EST", "Friday, December 31, 9999 11:59:59 PM XYZ"]))),
        st.sampled_from(["Submission Field:", "Comments:", "Files:", "\tOriginal filename: a.ipynb",
                         "\tFilename: x_attempt_2024-02-20-00-35-07_a.ipynb", "No files were attached to this "
                         "submission.", "Mar 2, 2026 315 PM", "05 March 2026 612 PM", "Feb 30, 2026 1299 AM"]),
        st.text(max_size=60)), max_size=15))
    encoding = draw(st.sampled_from(["utf-8", "utf-16", "latin-1"]))
    return "\n".join(lines).encode(encoding, "replace")


_yaml_scalars = st.one_of(_scalars, st.datetimes(), st.dates(), st.binary(max_size=8),
                          st.sampled_from(["2026-19-01 10:00:00", "0x" + "f" * 200, "1" * 5000, ".nan", "!!python/object:os.system ls",
                                           "&a [*a]", "*a", "<<: {a: 1}", "? [1]\n: 2", "~", "0o777", "1_000",
                                           "2026-03-01T18:00:00Z"]))
_yaml_values = st.recursive(_yaml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from([":name", ":sid", ":email", ":submitters",
                                                                  ":created_at"]), inner, max_size=5)),
    max_leaves=20)


@st.composite
def gradescope_yaml(draw):
    """submission_metadata.yml: structured (submissions, submitters, times of every type) or raw text, with
    keys twice, aliases, tags and values Python cannot take spliced in."""
    if draw(st.booleans()):
        metadata = draw(st.dictionaries(st.one_of(st.sampled_from(["submission_1", "submission_2", "..", "/etc",
                                                                   "a/b", ""]), _scalars.filter(lambda v: v is not None)),
                                        _yaml_values, max_size=4))
        try:
            text = yaml.safe_dump(metadata, allow_unicode=True)
        except (yaml.YAMLError, ValueError, TypeError):
            text = "{}"
    else:
        text = draw(st.text(max_size=200))
    for splice in draw(st.lists(st.sampled_from([
            "submission_1:\n  :submitters: []\n", "a: &x [1]\nb: *x\n", "k: !!python/tuple [1]\n",
            "t: 2026-02-30\n", "n: 0x" + "f" * 120 + "\n", "submission_1: 5\n", ":created_at: 2026-19-01 10:00:00\n",
            "- 1\n", "{[1]: 2}\n", "\t\n", "%YAML 1.1\n---\n", "...\n"]), max_size=3)):
        text += splice
    return text


@st.composite
def zip_entry(draw):
    """(name as raw bytes, data, UTF-8 flag, external attributes, method, size it states)."""
    name = draw(st.one_of(
        st.binary(min_size=0, max_size=40),
        st.text(max_size=30).map(lambda s: s.encode("utf-8", "surrogatepass")),
        st.sampled_from([b"../x.ipynb", b"/abs.ipynb", b"C:/x.ipynb", b"a\\b.ipynb", b"dir/", b"./.",
                         b"x" * 300, b"a/" * 40 + b"deep.ipynb", b"smithalice_1001_5001_n-queens.ipynb",
                         b"\xff\xfe_1002_5002_x.ipynb", "\u202e.ipynb".encode(), b"__MACOSX/._x",
                         b"N-Queens_bob_attempt_2026-03-01-10-00-00.txt", b"nested.zip"]),
        st.builds(lambda a, b: a + b, st.binary(max_size=10), st.sampled_from([b".ipynb", b".py", b".zip", b"/"]))))
    data = draw(st.one_of(st.binary(max_size=200), st.just(ALICE.read_bytes()[:2000]), st.just(b"{}")))
    return (name, data, draw(st.booleans()), draw(st.sampled_from([0, 0o120777 << 16, 0o040755 << 16, 0o100644 << 16])),
            draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])),
            draw(st.sampled_from(["true", "true", "less", "more", "huge"])))


def raw_zip(entries):
    """A zip written byte by byte, so names, flags and sizes can be anything (zipfile would clean them)."""
    out, central = io.BytesIO(), []
    for name, data, utf8, attributes, method, stated in entries:
        body = data if method == zipfile.ZIP_STORED else zlib.compress(data)[2:-4]
        size = {"true": len(data), "less": max(len(data) - 5, 0), "more": len(data) + 100,
                "huge": 0xFFFFFFFE}[stated]
        flags = 0x800 if utf8 else 0
        crc = zlib.crc32(data)
        offset = out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, method, 0, 0, crc, len(body), size,
                              len(name), 0) + name + body)
        central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 0x314, 20, flags, method, 0, 0, crc, len(body),
                                   size, len(name), 0, 0, 0, 0, attributes, offset) + name)
    start = out.tell()
    for record in central:
        out.write(record)
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), out.tell() - start, start, 0))
    return out.getvalue()


# --- the fuzzers ------------------------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ
@given(st.one_of(notebook_json(), st.binary(max_size=300), mutated(ALICE.read_bytes()[:3000])))
def test_any_notebook_json_is_a_notebook_or_its_rows_reason(raw):
    read_notebook(raw, "x.ipynb")


@pytest.mark.slow
@FUZZ
@given(st.one_of(marimo_text(), mutated(b"import marimo\napp = marimo.App()\n\n@app.cell\ndef _():\n    x = 1\n"
                                        b"    return (x,)\n\nwith app.setup:\n    import math\n")))
def test_any_marimo_file_is_a_notebook_or_its_rows_reason(raw):
    read_notebook(raw, "x.py")


@pytest.mark.slow
@FUZZ
@given(st.one_of(py_text(), st.binary(max_size=300)))
def test_any_py_file_is_a_notebook_or_its_rows_reason(raw):
    read_notebook(raw, "x.py")


@pytest.mark.slow
@FUZZ
@given(st.one_of(receipt_bytes(), st.binary(max_size=300)))
def test_any_receipt_or_lms_name_time_is_read_without_an_exception(raw):
    read_receipt(raw)


@pytest.mark.slow
@FUZZ
@given(gradescope_yaml())
def test_any_gradescope_metadata_gives_rows_or_one_line(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("gradescope")
    (folder / "submission_1").mkdir()
    (folder / "submission_1" / "n-queens.ipynb").write_bytes(ALICE.read_bytes())
    (folder / "submission_metadata.yml").write_text(text, encoding="utf-8", errors="surrogatepass")
    read_download(folder, folder / "unpacked")


@pytest.mark.slow
@FUZZ
@given(st.one_of(st.lists(zip_entry(), max_size=6).map(raw_zip), mutated(raw_zip([
    (b"smithalice_1001_5001_n-queens.ipynb", ALICE.read_bytes()[:500], False, 0, zipfile.ZIP_DEFLATED, "true"),
    (b"w/x.py", b"x = 1\n", True, 0, zipfile.ZIP_STORED, "true")]))))
def test_any_zip_is_unpacked_or_its_rows_reason(tmp_path_factory, data):
    read_zip(data, tmp_path_factory.mktemp("zip"))


@pytest.mark.slow
@FUZZ
@given(st.lists(zip_entry(), min_size=1, max_size=5))
def test_any_download_of_such_names_gives_rows_or_one_line(tmp_path_factory, entries):
    folder = tmp_path_factory.mktemp("download")
    (folder / "submissions.zip").write_bytes(raw_zip(entries))
    read_download(folder / "submissions.zip", folder / "unpacked")


# --- the inputs that once ended a run --------------------------------------------------------------------


READERS = {
    "notebook": lambda path, tmp: read_notebook(path.read_bytes(), path.name),
    "py": lambda path, tmp: read_notebook(path.read_bytes(), path.name),
    "receipt": lambda path, tmp: read_receipt(path.read_bytes()),
    "gradescope": lambda path, tmp: _gradescope_case(path, tmp),
    "zip": lambda path, tmp: read_zip(path.read_bytes(), tmp),
}


def _gradescope_case(path, tmp):
    folder = tmp / "export"
    (folder / "submission_1").mkdir(parents=True)
    (folder / "submission_1" / "n-queens.ipynb").write_bytes(ALICE.read_bytes())
    (folder / "submission_metadata.yml").write_bytes(path.read_bytes())
    read_download(folder, tmp / "unpacked")


CASES = sorted(p for p in CORPUS.glob("*/*") if p.is_file() and p.name != "README.md")


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_the_corpus_of_inputs_that_once_ended_a_run(path, tmp_path):
    READERS[path.parent.name](path, tmp_path)
