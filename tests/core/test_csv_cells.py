"""One CSV writer for every file we emit: rows that cannot be split, cells that are never formulas.

Read back three ways: Python's csv module; a reader that, like Excel's and LibreOffice's, ends a row at any
CR or LF outside quotes; and LibreOffice itself (Debian's libreoffice-calc, `soffice --headless
--convert-to xlsx`, read back with openpyxl), with a comma and with a semicolon as its separator.
"""

import csv
import io
import shutil
import subprocess

import openpyxl
import pytest

from autograder.core.csv_cells import Number, Verbatim, csv_text, safe_cell

HOSTILE = [
    "Doe\r=cmd|' -C calc'!A0, Jane",       # the red team's name: a bare CR, then a formula
    "Doe\n=cmd|' -C calc'!A0",
    "Doe\r\n+1+1",
    " =1+1",                                # a formula after spaces, tabs or control characters
    "\t=1+1",
    "\x01@SUM(A1)",
    "\u00a0-2+3",
    "=HYPERLINK(\"http://x\")",
    "a;b", "a,b", 'say "hi"', "", "plain", "Núñez, Erin",
]


def rows():
    return [[name, Number(-0.5), Verbatim("-"), "5"] for name in HOSTILE]


def cr_splitting_rows(text):
    """Rows as a reader that ends a row at any CR or LF outside quotes sees them (Excel's, LibreOffice's)."""
    found, row, cell, quoted, i = [], [], "", False, 0
    while i < len(text):
        char = text[i]
        if quoted:
            if char == '"' and text[i + 1:i + 2] == '"':
                cell, i = cell + '"', i + 1
            elif char == '"':
                quoted = False
            else:
                cell += char
        elif char == '"':
            quoted = True
        elif char == ",":
            row, cell = row + [cell], ""
        elif char in "\r\n":
            found.append(row + [cell])
            row, cell = [], ""
            if char == "\r" and text[i + 1:i + 2] == "\n":
                i += 1
        else:
            cell += char
        i += 1
    return found + ([row + [cell]] if row or cell else [])


def starts_like_a_formula(cell):
    return cell.lstrip(" \t\r\n\x00\x01\u00a0").startswith(("=", "+", "-", "@"))


def test_every_line_ends_with_crlf_and_every_risky_field_is_quoted():
    text = csv_text(["name", "adjustment", "moodle", "score"], rows())
    assert text.endswith("\r\n") and text.count("\r\n") >= len(HOSTILE) + 1
    # Even a reader that ends a row at every CR or LF, quotes or not (splitlines), finds no formula.
    for line in text.splitlines():
        assert not starts_like_a_formula(line.lstrip('"')), repr(line)
    assert '"a;b"' in text and '"a,b"' in text and '"say ""hi"""' in text


@pytest.mark.parametrize("reader", ["python", "cr-splitting"])
def test_no_row_is_split_and_no_cell_is_a_formula(reader):
    text = csv_text(["name", "adjustment", "moodle", "score"], rows())
    table = (list(csv.reader(io.StringIO(text, newline=""))) if reader == "python" else cr_splitting_rows(text))
    assert len(table) == len(HOSTILE) + 1
    for original, row in zip(HOSTILE, table[1:]):
        assert row == [safe_cell(original), "-0.5", "-", "5"]
        assert not starts_like_a_formula(row[0]) or row[0].startswith("'"), row
    assert [r[1] for r in table[1:]] == ["-0.5"] * len(HOSTILE)     # our own numbers are never guarded


def test_the_guard_looks_past_leading_blanks_and_control_characters():
    for cell in (" =1", "\t=1", "\r=1", "\x01@x", "\u00a0+1", "\x7f-1", "=1"):
        assert safe_cell(cell).startswith("'"), repr(cell)
    for cell in ("Jane", "a=b", "1-2", "ok -", ""):
        assert safe_cell(cell) == cell
    assert safe_cell("nul\x00led") == "nulled"


@pytest.mark.skipif(shutil.which("soffice") is None,
                    reason="LibreOffice is missing: apt-get install libreoffice-calc-nogui")
@pytest.mark.slow
@pytest.mark.parametrize("separator", [",", ";"])
def test_libreoffice_reads_every_row_whole_and_no_formula(tmp_path, separator):
    text = csv_text(["name", "adjustment", "moodle", "score"], rows())
    if separator == ";":       # a locale whose list separator is `;`: the same file, read with that delimiter
        text = text.replace(",", ";")  # our fields hold no bare `,` now: every one that had one is quoted
        expected_names = [safe_cell(n).replace(",", ";") for n in HOSTILE]
    else:
        expected_names = [safe_cell(n) for n in HOSTILE]
    source = tmp_path / "grades.csv"
    source.write_bytes(text.encode("utf-8"))
    done = subprocess.run(["soffice", f"-env:UserInstallation=file://{tmp_path}/profile", "--headless",
                           f"--infilter=CSV:{ord(separator)},34,76,1", "--convert-to", "xlsx", "--outdir",
                           str(tmp_path), str(source)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    sheet = openpyxl.load_workbook(tmp_path / "grades.xlsx").active
    table = [[cell for cell in row] for row in sheet.iter_rows()]
    assert len(table) == len(HOSTILE) + 1
    for expected, row in zip(expected_names, table[1:]):
        assert all(cell.data_type != "f" for cell in row), [c.value for c in row]
        read = "" if row[0].value is None else str(row[0].value)
        assert read.replace("\n", "").replace("_x0001_", "\x01") == expected.replace("\r", "").replace("\n", "")
