"""Refuse files that hold solution code, hidden case inputs or hidden expected values, and pages that say
anything about a hidden case in words the grader did not write.

Feedback pages (`vet_page`): a hand-in chooses its exception classes, names, messages and values, and can
spell an input any way it likes (letters, a checksum, a class named after it), so no search of a page for
an input can tell it is not there.  Instead, everything a page says about a hidden case must come from a
fixed vocabulary the grader wrote (feedback/explain.hidden_words: statuses, Python's own exception names,
scoring's fixed sentences), beside the case's description from cases.toml; a page that says anything
else is withheld.  What a public case says is the hand-in's own, and holds nothing hidden because nothing
hidden is in its process before its turn (engine/requests.sealed) and nothing of one hand-in reaches the
next (docs/security.md).

Files the course publishes (the student bundle: `check`, `scan`), which are the grader's own text, are
searched for secrets:

What counts as a secret ("needles"):
  * solution code: every line inside a `### BEGIN SOLUTION` / `### END SOLUTION`
    region of solutions/*/*.ipynb, except trivial lines (shorter than 12
    characters, `return True`, `pass`, ...);
  * hidden case inputs: each hidden case's call text as written in cases.toml
    (always), and its argument texts when distinctive (7+ characters without spaces);
  * hidden expected values with a distinctive rendering: strings of 8+
    characters, lists whose rendering has 12+ (and the first items of a long
    list, as a cut rendering shows them); numbers, booleans and None would
    match anywhere and are skipped.
What the course publishes by design is not a secret, so a solution line,
argument or expected value found there is dropped: the reference notebooks'
text outside solution regions and reference-only cells (the student
notebooks are generated from it: a markdown cell may explain `[0, 2, 0]`),
and every assignment's public calls, hints, descriptions and public
expected values.  Hidden call texts are never dropped.

Matching ignores whitespace and quote style, and looks through the layers
files put on text: JSON string escapes (notebooks), HTML entities, and the
XML inside zip-based files (public_rubric.xlsx).
"""

import ast
import html
import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import runtime
from ..core.assignment import load_assignment
from ..core.errors import AutograderError
from ..grade import scoring
from . import explain

MIN_LINE = 12
MIN_ARGUMENT = 7
MIN_STRING = 8
MIN_LIST = 12
MIN_LIST_HEAD = 24
TRIVIAL_LINES = {"pass", "continue", "break", "return", "else:", "try:", "finally:", "return True",
                 "return False", "return None", "return 0", "return 1", "return []", "return result",
                 "return total", "return count", "yield from", "except Exception:"}
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
ZIP_SUFFIXES = (".xlsx", ".zip", ".docx", ".pptx", ".odt", ".ods")


@dataclass(frozen=True)
class Needle:
    kind: str      # "solution code", "hidden case input", "hidden expected value"
    where: str     # which file or case it comes from
    text: str      # as written, for the message
    key: str       # normalized, for matching


@dataclass(frozen=True)
class Leak:
    file: str
    needle: Needle

    def __str__(self):
        text = self.needle.text if len(self.needle.text) <= 80 else self.needle.text[:77] + "..."
        return f"{self.file}: {self.needle.kind} ({self.needle.where}): {text!r}"


class LeakError(AutograderError):
    def __init__(self, leaks):
        self.leaks = leaks
        self.details = tuple(str(leak) for leak in leaks)
        shown = "; ".join(str(leak) for leak in leaks[:5])
        more = f" (and {len(leaks) - 5} more)" if len(leaks) > 5 else ""
        super().__init__(f"refusing to write: {shown}{more}")


def normalize(text):
    return re.sub(r"\s+", "", text).replace('"', "'")


# --- what is secret ----------------------------------------------------------------------------

def solution_needles(course):
    published = published_text(course)
    needles = []
    for path in sorted((course.root / "solutions").glob("*/*.ipynb")):
        where = path.relative_to(course.root).as_posix()
        for line in _notebook_lines(path, inside=True):
            key = normalize(line)
            if len(line) < MIN_LINE or line in TRIVIAL_LINES or line.startswith("###") or key in published:
                continue
            needles.append(Needle("solution code", where, line, key))
    return _unique(needles)


def _notebook_lines(path, inside):
    """Stripped lines inside the solution regions, or (inside=False) those students get: the lines
    outside them, of cells not tagged reference-only, markdown included."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    lines = []
    for cell in notebook.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        published = "reference-only" not in cell.get("metadata", {}).get("tags", [])
        in_region = False
        for raw in source.splitlines():
            line = raw.strip()
            if line.startswith(BEGIN):
                in_region = True
            elif line.startswith(END):
                in_region = False
            elif line and (in_region if inside else (published and not in_region)):
                lines.append(line)
    return lines


def published_text(course):
    """What the course shows students by design, normalized: the reference notebooks outside their
    solution regions and reference-only cells, and every assignment's public cases, hints,
    descriptions and public expected values."""
    parts = []
    for path in sorted((course.root / "solutions").glob("*/*.ipynb")):
        parts += _notebook_lines(path, inside=False)
    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        expected = _expected(assignment)
        for case in assignment.cases:
            parts += [case.hint, case.description]
            if not case.hidden:
                parts.append(case.call.text)
                if case.name in expected:
                    parts += [runtime.show(expected[case.name], limit=10**9), json.dumps(expected[case.name])]
    return "\0".join(normalize(p) for p in parts if p)


def hidden_needles(course, assignment_ids=None, inputs_only=False):
    """Needles for the hidden cases of the given assignments (default: all of them)."""
    published = published_text(course)
    needles = []
    for assignment_id in assignment_ids or course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        expected = _expected(assignment)
        for case in assignment.hidden_cases:
            where = f"{assignment.id}: hidden case {case.description!r}"
            needles.append(Needle("hidden case input", where, case.call.text, normalize(case.call.text)))
            for text in _argument_texts(case.call.text):
                key = normalize(text)
                if len(key) >= MIN_ARGUMENT and key not in published:
                    needles.append(Needle("hidden case input", where, text, key))
            if inputs_only or case.name not in expected:
                continue
            for text in _value_renderings(expected[case.name]):
                key = normalize(text)
                if key not in published:
                    needles.append(Needle("hidden expected value", where, text, key))
    return _unique(needles)


def _expected(assignment):
    try:
        return json.loads(assignment.expected_path.read_text(encoding="utf-8"))["expected"]
    except (OSError, ValueError, KeyError):
        return {}


def _argument_texts(call_text):
    try:
        node = ast.parse(call_text.strip(), mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Call):
        return []
    source = call_text.strip()
    texts = [ast.get_source_segment(source, a) for a in [*node.args, *(k.value for k in node.keywords)]]
    texts = [t for t in texts if t]
    if len(texts) > 1:
        texts.append(source[source.index("(") + 1:source.rindex(")")])
    return texts


def _value_renderings(value):
    """Distinctive renderings of an expected value; none for numbers, booleans and None."""
    if type(value) is str:
        return [value] if len(normalize(value)) >= MIN_STRING else []
    if type(value) not in (list, dict):
        return []
    rendered = [json.dumps(value, separators=(",", ":"))]
    if type(value) is list and len(value) > 3:
        head = json.dumps(value[:3], separators=(",", ":"))[:-1]   # how a cut rendering starts
        if len(head) >= MIN_LIST_HEAD:
            rendered.append(head)
    return [r for r in rendered if len(normalize(r)) >= MIN_LIST]


def _unique(needles):
    seen, result = set(), []
    for needle in needles:
        if needle.key and needle.key not in seen:
            seen.add(needle.key)
            result.append(needle)
    return result


# --- where to look -----------------------------------------------------------------------------

def searchable_text(name, data, _depth=0):
    """Every layer of text a reader of this file could see, normalized, in one string."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    variants = [text, html.unescape(text), text.replace("\\n", "\n").replace('\\"', '"').replace("\\'", "'")]
    lower = name.lower()
    if lower.endswith((".ipynb", ".json")):
        try:
            variants.append("\n".join(_strings(json.loads(text))))   # a cell's lines, joined again
        except ValueError:
            pass
    if lower.endswith(ZIP_SUFFIXES) and isinstance(data, bytes) and _depth < 2:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as bundle:
                for member in bundle.infolist():
                    if member.file_size <= 50_000_000:
                        variants.append(searchable_text(member.filename, bundle.read(member), _depth + 1))
        except (zipfile.BadZipFile, OSError, RuntimeError):
            pass
    return "\0".join(normalize(v) for v in variants)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)


def scan(files, needles):
    """Leaks in {name: bytes or str}."""
    leaks = []
    for name in sorted(files):
        haystack = searchable_text(name, files[name])
        leaks += [Leak(name, n) for n in needles if n.key in haystack]
    return leaks


def scan_folder(folder, needles):
    folder = Path(folder)
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return scan(files, needles)


def check(files, needles):
    """Raise LeakError naming every file and what leaked, if anything did."""
    leaks = scan(files, needles)
    if leaks:
        raise LeakError(leaks)


# --- feedback pages: hidden cases only in the grader's words ------------------------------------

@dataclass(frozen=True)
class Unvetted:
    """What a page would say about a hidden case that is not the grader's own words."""
    description: str
    field: str
    text: str

    def __str__(self):
        text = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return f"hidden case {self.description[:80]!r}: its {self.field} {text!r} is not one of the grader's own words"


# The fields of a hidden case in a page's view (feedback/view.py), and what each may hold.
_HIDDEN_STATUSES = frozenset((*explain.CASE_STATUS, "slow", "withheld"))


def page_whys(assignment):
    """The `why` a hidden case may have on a page: empty, or a sentence scoring writes when a case's requirements
    did not pass.  Worked out once per class (pages.build_pages): a case with k requirements has 2**k - 1."""
    return frozenset({"", *(m.removeprefix("withheld: ") for m in scoring.withheld_messages(assignment.cases))})


def vet_page(view, assignment, whys=None):
    """[Unvetted] for each field of a hidden case in a page's `view` whose text the grader did not write: the
    result from hidden_words(), the status from the grader's statuses, the points numbers, `why` empty or one of
    the sentences scoring writes when a case's requirements did not pass (names from `assignment`'s cases.toml;
    `whys`: page_whys(assignment), when the caller has it already), and no other field but the description (which
    the gradebook keeps from cases.toml)."""
    words = explain.hidden_words()
    whys = page_whys(assignment) if whys is None else whys
    found = []
    for case in view["hidden"]:
        description = str(case.get("description", ""))
        checks = (("result", case.get("result"), words), ("status", case.get("status"), _HIDDEN_STATUSES),
                  ("why", case.get("why", ""), whys))
        found += [Unvetted(description, field, str(text)) for field, text, allowed in checks if text not in allowed]
        unknown = sorted(set(case) - {"description", "result", "status", "points", "max_points", "passed", "why"})
        found += [Unvetted(description, "field", name) for name in unknown]
        found += [Unvetted(description, name, str(case[name])) for name in ("points", "max_points")
                  if not _is_number(case[name])]
    return found


def _is_number(text):
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True
