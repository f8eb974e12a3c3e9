"""Put the files of each submission together into hand-ins, and never merge what the layout cannot tell apart.

The walker (collect.py) finds each file with the student the layout names and
the submission it belongs to (`group`).  Here:

* **One submission, several notebooks** (a Canvas upload of `n-queens.ipynb`
  and a blank `Copy of n-queens.ipynb`, a Moodle folder, a Blackboard
  attempt, a student's zip): the notebook named like the assignment is graded;
  when no single one is, each is graded and the best counts (the gradebook
  counts the best of one submission's notebooks, gradebook/store.py).  Either
  way every hand-in's note names all of them and says which counts.
* **No guess ever merges.**  Notebooks whose owners the layout cannot tell get
  a row each, keyed by their path, with one warning naming the layout: several
  files named after the assignment rather than a student (`n-queens.ipynb`,
  `n-queens (1).ipynb`), a folder whose notebooks sit in different sub-folders
  (`section-2/s1/...`, `section-2/s2/...`), two Classroom copies claiming one
  name in a Drive folder.  A row too many is a question for a TA; a class in
  one row is a wrong grade for everyone.

A note for a hand-in's row (and its feedback page) always starts with
`handed in: `, so the page can show it apart from the grader's own words.
"""

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from . import identity

NOTE = "handed in: "                # every hand-in note starts so (feedback/view.py shows them)
# Who a file is named after when it is named after nobody: the assignment itself, a copy of it, a new file.
_GENERIC_PREFIXES = ("copy of ", "untitled", "notebook", "colab notebook")
# Kinds of identity whose submission the LMS (or a per-student zip, or the instructor's folder) names.
LMS_KINDS = {"canvas", "moodle", "gradescope", "blackboard", "d2l", "drive", "teams", "classroom"}
# Notebooks graded of one submission (one upload: a folder, a zip, an attempt): each may take its whole time
# budget, and six looping ones once took 96 s.  A real one holds one, or a copy or two beside it.
MAX_NOTEBOOKS = 5


@dataclass
class Found:
    """A file that belongs to a student's hand-in, before the files of one hand-in are put together."""
    path: object                       # the real file to read (pathlib.Path)
    source: str                        # for people
    who: identity.Identity
    original: str                      # the file's own name, as the student named it
    group: str                         # one submission: its files are put together
    submitted_at: str | None = None
    time_source: str = ""
    file_time: str | None = None
    explicit: bool = False             # named on the command line
    notes: tuple = ()                  # what intake says of this submission (a Blackboard attempt's number ...)
    where: str = ""                    # the folder it sits in, within its student's submission
    position: int = 0                  # which of the paths given to `grade` it came from (0, 1, ...)
    as_notebook: bool = False          # a notebook under another suffix (`n-queens.ipynb.txt`), read as one


@dataclass
class Submission:
    """The files of one submission, and what was decided about them."""
    who: identity.Identity
    notebooks: list                    # Found, to be graded (each its own hand-in)
    helpers: list                      # Found: .py files beside them
    notes: list = field(default_factory=list)


def with_notes(notes, message):
    """A hand-in's row message: intake's notes on their own lines first, then the grader's own words."""
    return "\n".join([*dict.fromkeys(notes), message] if message else list(dict.fromkeys(notes)))


def notes_in(message):
    """The intake notes in a row's message (what `with_notes` put there)."""
    return [line for line in (message or "").splitlines() if line.startswith(NOTE)]


def generic(name, notebook_name):
    """Is this file named after the assignment (or a copy of it, or a new notebook) rather than a student?"""
    stem = identity.plain_stem(PurePosixPath(name).name).casefold().strip()
    if stem.startswith("copy of "):
        stem = identity.plain_stem(stem[len("copy of "):]).strip()
    return stem == PurePosixPath(notebook_name).stem.casefold() or stem.startswith(_GENERIC_PREFIXES[1:])


def named_like_the_assignment(found, notebook_name):
    """`n-queens.ipynb`, and the names a second upload or download of it gets: Canvas's `n-queens-1.ipynb`
    (Attachment.make_unique_filename, for a file uploaded again under the same name), a browser's
    `n-queens (1).ipynb`."""
    stem = identity.plain_stem(PurePosixPath(found.original).name).casefold()
    return re.sub(r"-\d+$", "", stem) == PurePosixPath(notebook_name).stem.casefold() or \
        stem == PurePosixPath(notebook_name).stem.casefold()


def submissions(found_files, notebook_name, warnings):
    """[Submission] of the found files; `warnings` gets one line per layout whose owners cannot be told."""
    groups = defaultdict(list)
    for found in found_files:
        groups[(found.who.key, found.group)].append(found)
    result, split = [], defaultdict(list)
    for (_, _), members in sorted(groups.items(), key=lambda item: item[0]):
        notebooks = [f for f in members if f.path.suffix.lower() == ".ipynb" or f.as_notebook]
        helpers = [f for f in members if f.path.suffix.lower() == ".py" and not f.as_notebook]
        if not notebooks:
            notebooks, helpers = helpers, []
        who = members[0].who
        reason = _cannot_tell(who, notebooks, notebook_name)
        if reason:
            graded, note = capped(notebooks, notebook_name)
            split[reason].extend(notebooks)
            for found in graded:
                found.who = identity.path_identity(found.source)
                result.append(Submission(found.who, [found], [h for h in helpers if h.where == found.where],
                                         [note] if note else []))
            continue
        result.append(_one_submission(who, notebooks, helpers, notebook_name))
    for reason, notebooks in sorted(split.items()):
        shown = ", ".join(f.source for f in notebooks[:6]) + (" ..." if len(notebooks) > 6 else "")
        warnings.append(f"{reason} ({shown}): whose each one is cannot be told, so each has its own row, keyed by "
                        "its path, and none is merged with another; name students with --student-pattern REGEX "
                        "if their paths say whose they are")
    return result


def _cannot_tell(who, notebooks, notebook_name):
    """Why these notebooks, which the walker put under one name, are not one student's: "" when they are."""
    if len(notebooks) < 2 or who.lms in LMS_KINDS - {"drive"} or who.lms == "pattern":
        return ""
    folders = {f.where for f in notebooks}
    if who.lms == "drive":
        return (f"a Google Drive folder holds {len(notebooks)} notebooks named as Classroom's copy for "
                f"{who.name!r}")
    if who.lms == "file" and generic(who.original or notebooks[0].original, notebook_name):
        return f"{len(notebooks)} notebooks are named after the assignment, not after a student"
    if who.lms == "file" and len({f.original for f in notebooks}) < len(notebooks):
        # A zip holding one name more than once: which entry came first says nothing of whose each is.
        return f"a zip holds {len(notebooks)} notebooks of one name, each claiming {who.name!r}"
    # A class's download inside one folder or zip (an unzipped Canvas download beside its zip): notebooks
    # named by an LMS for different students are never one student's submission.
    if len({found.key for found in (identity.lms_file(f.original) for f in notebooks) if found}) > 1:
        return (f"{who.name}{'' if who.lms == 'zip' else '/'} holds {len(notebooks)} notebooks named by an LMS "
                "for different students (if it is an LMS's download, give it alone on the command line)")
    if len(folders) > 1:
        return f"{who.name}{'' if who.lms == 'zip' else '/'} holds {len(notebooks)} notebooks in different folders"
    return ""


def capped(notebooks, notebook_name):
    """(the notebooks of one submission to grade, a note naming those left out): at most MAX_NOTEBOOKS, those
    named like the assignment first, then by their path; the note is "" when none is left out."""
    if len(notebooks) <= MAX_NOTEBOOKS:
        return notebooks, ""
    ordered = sorted(notebooks, key=lambda f: (not named_like_the_assignment(f, notebook_name), f.source))
    graded, rest = ordered[:MAX_NOTEBOOKS], ordered[MAX_NOTEBOOKS:]
    names = ", ".join(f.original for f in rest[:6]) + (" ..." if len(rest) > 6 else "")
    return graded, (f"{NOTE}{len(notebooks):,} notebooks in one submission; at most {MAX_NOTEBOOKS} of one "
                    f"submission are graded, so {len(rest):,} were not: {names}")


def _one_submission(who, notebooks, helpers, notebook_name):
    """The notebook named like the assignment is graded; when no single one is, each is, and the best counts
    (at most MAX_NOTEBOOKS of them: the rest are named in the row)."""
    if len(notebooks) < 2 or who.lms == "file":
        # Files named by student at the top are a browser's downloads of one hand-in (`carol (1).ipynb`):
        # each is a hand-in of its own, the newest counting (said by collect.py's layout notes).
        return Submission(who, notebooks, helpers)
    named = [f for f in notebooks if named_like_the_assignment(f, notebook_name)]
    names = ", ".join(f.original for f in notebooks[:6]) + (" ..." if len(notebooks) > 6 else "")
    if len(named) == 1:
        chosen = named
        note = (f"{NOTE}{len(notebooks)} notebooks in one submission ({names}); {named[0].original} counts, as "
                f"it is named like the assignment ({notebook_name})")
    else:
        chosen = named or notebooks
        note = (f"{NOTE}{len(notebooks)} notebooks in one submission ({names}); "
                + (f"{len(chosen)} are named like the assignment: " if named else "none is named like the "
                   f"assignment ({notebook_name}), so ") + "each was graded and the best one counts")
    chosen, left_out = capped(chosen, notebook_name)
    return Submission(who, chosen, helpers, [note, left_out] if left_out else [note])


# What a text or URL entry is called in a row (Canvas's `_text.html`, `_link.html`; Moodle's online text).
ENTRY_WORDS = {"text": "online text", "onlinetext": "online text", "link": "a website URL"}


def nothing_to_grade(what):
    """(status, message) of a student an LMS names whose hand-in holds no notebook, alike in every layout (a
    Moodle download with folders or without, Canvas's, Blackboard's): files, but none a notebook, are the
    wrong type of file; online text (or a URL) alone is no notebook.  Either scores 0, and says what was
    handed in instead."""
    entries = sorted({w for w in what if w in ENTRY_WORDS.values() or w.endswith(" entry")})
    zips = sorted({w for w in what if w.lower().endswith(".zip")})        # a zip is a way to hand in, not a type
    files = sorted({w for w in what if w not in entries and w not in zips})
    if files:
        shown = ", ".join(files[:3]) + (" ..." if len(files) > 3 else "")
        quarto = [f for f in files if PurePosixPath(f).suffix.lower() == ".qmd"]
        # otter-grader 7 grades Quarto and R Markdown only for R assignments; a Python one is graded from its
        # notebook, which `quarto convert` writes.
        hint = (f"; a Quarto document is not graded: `quarto convert {quarto[0]}` writes the notebook "
                f"{PurePosixPath(quarto[0]).stem}.ipynb, to hand in instead") if quarto else \
            "; hand in the notebook itself (in Colab: File > Download > Download .ipynb)"
        return "wrong-file-type", (f"no notebook was handed in, only {shown}" + (f" and {', '.join(entries)}"
                                   if entries else "") + ": not a notebook (.ipynb) or Python file (.py)" + hint)
    if entries:
        return "no-notebook", f"no notebook was handed in, only {' and '.join(entries)}"
    if zips:
        return "no-notebook", f"no notebook was found in {', '.join(zips[:3])}"
    return "no-notebook", "no notebook was handed in (nothing)"
