"""The one CSV writer: every CSV file the grader emits is written by `csv_text`.

Two promises, whatever a student put in a name, a file name or a message:

* A row cannot be split.  Lines end with CRLF (RFC 4180), and every field that
  holds a CR, an LF, a quote, a comma or a semicolon is quoted (a quote
  doubled).  Python's csv module quotes only what its own delimiter and line
  end need, so a bare CR in a name was written unquoted, and a reader that
  ends a row at any CR (Excel's and LibreOffice's do, and so do many scripts)
  started a new row there.  The semicolon is quoted because a spreadsheet in a
  locale whose list separator is `;` reads the file with that delimiter.
* A cell is never run as a formula.  A text cell whose first visible character
  is =, +, -, @ (after any leading spaces, tabs or control characters, which a
  spreadsheet skips), or which starts with a tab or a CR, gets a leading
  apostrophe: the usual guard (OWASP, "CSV injection").  So does each line of a
  field that holds line breaks, for a reader that splits rows at every one.
  Numbers we format ourselves are left alone.
"""

import re

_FORMULA_STARTS = ("=", "+", "-", "@")
# What a spreadsheet skips before it decides whether a cell is a formula: white space and control characters.
_LEADING_BLANKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f]*")
# A field holding any of these is quoted: each could end a field or a row in some reader.
_NEEDS_QUOTES = re.compile(r'[\r\n",;]')
# A line inside a field that would start like a formula: guarded too, for a reader that splits rows at every
# line break, quotes or not (a script's splitlines()).  No name or message needs a line to start so.
_LINE_STARTS_LIKE_A_FORMULA = re.compile(r"(?:(?<=\n)|(?<=\r)(?!\n))"
                                         r"(?=(?:[^\S\r\n]|[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f])*[=+\-@])")
LINE_END = "\r\n"


class Number(float):
    """A number we write ourselves (an adjustment of -0.5): a spreadsheet reads it as a number, so it is
    written as one, shortest form, and never guarded like text that starts with a minus sign."""

    def __str__(self):
        return f"{float(self):g}"


class Verbatim(str):
    """Text we write ourselves and mean as it is (Moodle's `-`, "no grade"): never guarded."""


def safe_cell(value):
    """A cell's value as it may be written: text from anyone never starts like a formula."""
    if isinstance(value, str) and not isinstance(value, Verbatim):
        value = value.replace("\x00", "")      # a NUL ends many CSV readers' line
        first = value[_LEADING_BLANKS.match(value).end():]
        if "\r" in value or "\n" in value:
            value = _LINE_STARTS_LIKE_A_FORMULA.sub("'", value)
        if value.startswith(("\t", "\r")) or first.startswith(_FORMULA_STARTS):
            return "'" + value
    return value


def _field(value, quote_all=False):
    text = "" if value is None else str(value)
    quoted = quote_all or _NEEDS_QUOTES.search(text)
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if quoted else text


def csv_row(cells, quote_all=False):
    """One row of CSV text, its line end included, every cell guarded."""
    return ",".join(_field(safe_cell(cell), quote_all) for cell in cells) + LINE_END


def csv_text(header, rows, quote_all=False):
    """A whole CSV file: the header, then the rows (each guarded, quoted where needed, ended by CRLF).
    `quote_all`: every field inside quotes (Blackboard's upload asks it of a comma-separated file)."""
    return csv_row(header, quote_all) + "".join(csv_row(row, quote_all) for row in rows)
