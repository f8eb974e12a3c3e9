"""CSV text that a spreadsheet opens as text, never as a formula.

Student names, file names and messages come from students: a cell starting
with =, +, -, @, a tab or a carriage return would be run as a formula by
Excel, LibreOffice or Google Sheets ("CSV injection").  Such a cell gets a
leading apostrophe, the usual guard (OWASP); numbers we format ourselves are
left alone.
"""

import csv
import io

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class Number(float):
    """A number we write ourselves (an adjustment of -0.5): a spreadsheet reads it as a number, so it is
    written as one, shortest form, and never guarded like text that starts with a minus sign."""

    def __str__(self):
        return f"{float(self):g}"


class Verbatim(str):
    """Text we write ourselves and mean as it is (Moodle's `-`, "no grade"): never guarded."""


def safe_cell(value):
    if isinstance(value, str) and not isinstance(value, Verbatim):
        value = value.replace("\x00", "")      # a NUL ends many CSV readers' line
        if value.startswith(_FORMULA_STARTS):
            return "'" + value
    return value


def csv_text(header, rows, quote_all=False):
    """`quote_all`: every field inside quotes (Blackboard's upload asks it of a comma-separated file)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows([safe_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()
