"""Whose download a level of a folder or zip is: decided by its structure, never by a vote of file names.

A level is read as one LMS's download only when what is there says so as a
whole: the outer zip's name (Blackboard's `gradebook_...`, D2L's `... Download
<date>`, Drive's `...Z-001`), the LMS's own metadata (Gradescope's
`submission_metadata.yml`), or every entry of the level fitting that LMS's
grammar (identity.py).  One student's upload cannot make a Canvas download
Blackboard's: it is one entry of many, and the others do not fit.  A level no
LMS's structure fits is read as a plain class folder, where each notebook is
a row of its own (named after its file or folder, or keyed by its path).

Which files at the top of a plain class folder are hand-ins: every one is,
named after its student, but the course's own files an instructor keeps beside
them (a roster, a grade sheet, a README) and the grader's own.
"""

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from . import files, identity

GRADESCOPE_METADATA = "submission_metadata.yml"
TEAMS_SUBMITTED = "Submitted files"
TEAMS_WORKING = "Working files"        # the students' own copies, not turned in (Teams' Student Work library)
D2L_INDEX = "index.html"
NOTEBOOK_SUFFIXES = (".ipynb", ".py")
QUARTO_SUFFIXES = (".qmd", ".rmd")
# The course's own files beside a class: rosters, grade sheets, settings, LMS metadata. Never a student's row.
COURSE_FILE_SUFFIXES = (".csv", ".tsv", ".xlsx", ".xls", ".ods", ".toml", ".yml", ".yaml", ".db", ".sqlite",
                        ".log")
COURSE_FILE_STEMS = ("readme", "license", "index")
SNIFF_BYTES = 64 * 1024
_NOTEBOOK_KEY = re.compile(rb'"(?:cells|nbformat|worksheets)"\s*:')


@dataclass(frozen=True)
class Names:
    """The grammar a level's names are read with."""
    files: str | None = None           # "canvas" or "moodle": every file (notebook) here has that LMS's form
    folders: bool = False              # every folder here is a Moodle submission folder


def level_names(shown):
    """(Names, look-alikes) of a level's (path, kind) entries: Canvas's or Moodle's grammar only where every
    notebook here fits it (every file, where there is no notebook: a class that handed in only PDFs), and
    Moodle's folders only where every folder is one.  The look-alikes are the names that fit a grammar the
    level as a whole does not have, for a warning."""
    notebooks = [c for c, k in shown if k == "file" and c.suffix.lower() in NOTEBOOK_SUFFIXES]
    candidates = notebooks or [c for c, k in shown if k == "file" and not course_file(c.name)]
    grammars = [identity.file_grammar(c.name) for c in candidates]
    lookalikes = []
    grammar = grammars[0] if grammars and len(set(grammars)) == 1 else None
    if grammar is None:
        lookalikes += [c for c, g in zip(candidates, grammars) if g]
    folders = [c for c, k in shown if k == "dir"]
    moodle = [c for c in folders if identity.moodle_folder(c.name)]
    if moodle and len(moodle) < len(folders):
        lookalikes += moodle
    return Names(grammar, bool(folders) and len(moodle) == len(folders)), lookalikes


def blackboard_level(shown, name):
    """Blackboard's *Assignment File Download*: its own zip name, or every entry named by Blackboard (a file
    each: a folder so named, which Blackboard never writes, is read as not fitting, keyed by its path)."""
    if identity.BLACKBOARD_ZIP.match(name or ""):
        return True
    return any(k == "file" for _, k in shown) and all(identity.blackboard_name(c.name) for c, _ in shown)


def d2l_level(shown, name):
    """D2L's *Download*: its own zip name, or every entry but its `index.html` named by D2L (a file, or a
    folder, per submission)."""
    if identity.D2L_ZIP.match(name or ""):
        return True
    named = [(c, k) for c, k in shown if not (k == "file" and c.name == D2L_INDEX)]
    return bool(named) and all(k in ("file", "dir") and identity.d2l_name(c.name) for c, k in named)


def gradescope_level(shown):
    """Gradescope's export: its `submission_metadata.yml`, and beside it only `submission_<id>` entries."""
    others = [(c, k) for c, k in shown if c.name != GRADESCOPE_METADATA]
    return any(c.name == GRADESCOPE_METADATA and k == "file" for c, k in shown) and \
        all(identity.GRADESCOPE_ENTRY.match(c.name) for c, k in others)


def teams_level(shown):
    """The *Student Work* library of a Teams class: `Submitted files`, and beside it only `Working files`."""
    names = {c.name: k for c, k in shown}
    return names.get(TEAMS_SUBMITTED) == "dir" and set(names) <= {TEAMS_SUBMITTED, TEAMS_WORKING}


def course_file(name):
    """A file an instructor keeps beside a class (a roster, a grade sheet, a README), never a hand-in."""
    path = PurePosixPath(name)
    if path.suffix.lower() in NOTEBOOK_SUFFIXES:
        return False
    return path.suffix.lower() in COURSE_FILE_SUFFIXES or path.stem.lower() in COURSE_FILE_STEMS


def handed_in_beside(shown, notebook):
    """Does this level hold students' hand-ins besides zips (a notebook, a folder)?  Then every zip in it is
    one student's upload, never an LMS's download."""
    return any(k == "dir" or (k == "file" and c.suffix.lower() != ".zip" and
                              (c.suffix.lower() in NOTEBOOK_SUFFIXES + QUARTO_SUFFIXES or notebook(c)))
               for c, k in shown)


def looks_like_notebook(path):
    """A notebook's JSON under another suffix (Safari's `n-queens.ipynb.txt`, a `.json`, no suffix): it opens
    with `{` and names `cells` or `nbformat` in its first 64 KB.  Only a regular file is read, no link
    followed, at most SNIFF_BYTES of it."""
    try:
        head = files.read_head(path, SNIFF_BYTES)
    except files.UnsafeFile:
        return False
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"{") and bool(_NOTEBOOK_KEY.search(head))


def wrong_suffix_note(name):
    """What a notebook read under another suffix is told, in its row and on its page."""
    suffix = PurePosixPath(name).suffix or "no suffix"
    return (f"{name} is a notebook saved under another name ({suffix}, as Safari saves GitHub's Raw page): it "
            "was read as the notebook it is; next time hand in the .ipynb file itself")
