"""Whose hand-in is it, on the roster?

Identity comes only from what the LMS wrote.  A hand-in's key comes from the
LMS's download (intake/identity.py).  It is matched to a roster student by, in
this order:
  1. the same key (Canvas `canvas:<user id>`, Gradescope `gradescope:<sid>`, Blackboard
     `blackboard:<username>`), where an LMS made the key;
  2. an alias the LMS gave (Moodle's per-assignment participant id, from its grading worksheet);
  3. the LMS's own id (a Canvas user id, a Gradescope SID) against the roster's LMS or SIS id, a
     Blackboard username against the roster's login, and an email the LMS wrote (Gradescope's metadata,
     Moodle's worksheet);
  4. for a GitHub Classroom clone, the roster's GitHub username, wherever it sits in the repository's name
     (`cs-principles-n-queens-alice`, `n-queens-puzzle-alice`: the longest username at its end);
  5. the name, only when exactly one roster student has it (Canvas writes "smithjane", Moodle and D2L
     "Jane Smith"): the match is said, never silent.
A name a student chose (a file's, a folder's, a repository's) is never compared with a login, an email or
an id: `cking.ipynb` is not Carol King's because her login is `cking`.  A hand-in that matches nobody keeps
its own key and its row, and is named in the run's notes; so is a name two roster students share.
"""

import re
import unicodedata
from dataclasses import dataclass, field


@dataclass
class Matching:
    matched: dict = field(default_factory=dict)       # hand-in key -> Student
    by_name: list = field(default_factory=list)       # (hand-in name, Student): matched on the name alone
    unmatched: list = field(default_factory=list)     # hand-ins (their names) that match no roster student
    ambiguous: list = field(default_factory=list)     # (hand-in name, [Student]) the name fits several
    name_taken: list = field(default_factory=list)    # (hand-in name, Student) another hand-in is surely theirs
    repositories: list = field(default_factory=list)  # Classroom clones no roster GitHub username fits

    def notes(self):
        notes = []
        if self.by_name:
            notes.append("matched to the roster by name alone (no id in the download): "
                         + ", ".join(f"{name} → {student.who}" for name, student in self.by_name[:8])
                         + (" ..." if len(self.by_name) > 8 else ""))
        if self.ambiguous:
            notes.append("these hand-ins' names fit several roster students, so they keep their own rows: "
                         + "; ".join(f"{name} ({', '.join(s.who for s in found[:3])})" for name, found in
                                     self.ambiguous[:8]))
        if self.name_taken:
            notes.append("these hand-ins' names fit a roster student whose hand-in came in under their id, so "
                         "they keep their own rows (a name never merges two hand-ins): "
                         + "; ".join(f"{name} ({student.who})" for name, student in self.name_taken[:8]))
        if self.repositories:
            notes.append(f"warning: {len(self.repositories)} GitHub Classroom repositor(ies) match no GitHub username "
                         "on the roster, so each keeps its own row under its own name (`not on the roster`), never "
                         f"a guessed part of it: {', '.join(sorted(set(self.repositories))[:8])}"
                         + (" ..." if len(set(self.repositories)) > 8 else ""))
        if self.unmatched:
            notes.append(f"{len(self.unmatched)} hand-in(s) match nobody on the roster and keep their own rows "
                         f"(marked `not on the roster`): {', '.join(self.unmatched[:8])}"
                         + (" ..." if len(self.unmatched) > 8 else ""))
        return notes


def folded(name):
    """A name as Canvas writes it in a file name: letters and digits only, lower case, no accents."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", plain.lower())


# Kinds of hand-in whose key and id an LMS (or `gh classroom`) made; a pattern is the instructor's own rule.
LMS_MADE = {"canvas", "moodle", "gradescope", "blackboard", "d2l", "drive", "teams", "classroom", "pattern"}
# Kinds whose `lms_id` is the LMS's own id of the student (not a name anyone chose).
LMS_IDS = {"canvas", "moodle", "gradescope", "blackboard", "pattern"}


def match(handins, students, aliases):
    """Match each hand-in (intake.collect.Handin) to a roster Student; returns a Matching."""
    result = Matching()
    hows = {}  # hand-in key -> how it matched, and the hand-in's name
    index = {}
    for student in students:
        for kind, value in (("key", student.key), ("id", student.lms_id), ("id", student.sis_id),
                            ("login", student.login.casefold()), ("email", student.email.casefold())):
            if value:
                index.setdefault((kind, value), []).append(student)
        for name in {student.name, student.sortable_name, _last_first(student.name)}:
            if folded(name):
                index.setdefault(("name", folded(name)), []).append(student)
    for alias, key in aliases.items():
        index.setdefault(("alias", alias), []).extend(s for s in students if s.key == key)
    github = {s.login.casefold(): s for s in students if s.lms == "classroom" and s.login}
    for handin in handins:
        if handin.student in result.matched:
            continue
        found, how = None, None
        kind_of = getattr(handin, "lms", "")
        made = kind_of in LMS_MADE or ":" in handin.student
        tries = [("key", handin.student if made else ""), ("alias", handin.student),
                 ("id", handin.lms_id if kind_of in LMS_IDS else ""),
                 ("login", handin.lms_id.casefold() if kind_of == "blackboard" else ""),  # Blackboard's own
                 ("email", handin.email.casefold()),
                 ("github", getattr(handin, "repository", "") if kind_of == "classroom" else ""),
                 ("name", folded(handin.name) if kind_of not in ("classroom", "path") else "")]
        for kind, value in tries:
            if kind == "github":
                candidates = _by_github(value, github) if value else []
            else:
                candidates = _unique(index.get((kind, value), ())) if value else []
            if len(candidates) == 1:
                found, how = candidates[0], kind
                break
            if len(candidates) > 1 and kind == "name":
                result.ambiguous.append((handin.name, candidates))
                break
        if found is None:
            if kind_of == "classroom" and getattr(handin, "repository", ""):
                result.repositories.append(handin.repository)
            elif not any(name == handin.name for name, _ in result.ambiguous):
                result.unmatched.append(handin.name if handin.name == handin.student
                                        else f"{handin.name} ({handin.student})")
            continue
        result.matched[handin.student] = found
        hows[handin.student] = (how, handin.name)
        if how == "name":
            result.by_name.append((handin.name, found))
    _no_merging_by_name(result, hows)
    return result


def _no_merging_by_name(result, hows):
    """A name alone never merges two hand-ins' rows.  When several hand-ins (different keys) reach one
    roster student and any of them only by name, the name-matched ones give the student up and keep
    their own rows: a hand-in matched by id or email is surely that student's, a name only perhaps
    (two Alice Smiths, or a folder named after a classmate)."""
    claims = {}
    for key, student in result.matched.items():
        claims.setdefault(student.key, []).append(key)
    for keys in claims.values():
        if len(keys) < 2:
            continue
        for key in keys:
            how, name = hows[key]
            if how == "name":
                student = result.matched.pop(key)
                result.by_name.remove((name, student))
                result.name_taken.append((name, student))


def _by_github(repository, github):
    """The roster student whose GitHub username the repository's name ends with (Classroom names a clone
    `<assignment slug>-<username>`), the longest such username winning; else one that sits anywhere in it
    as whole `-`-separated words.  [] when none does, or two fit equally."""
    name = repository.casefold()
    ending = sorted((len(u), u) for u in github if name == u or name.endswith("-" + u))
    if ending:
        longest = [u for size, u in ending if size == ending[-1][0]]
        return [github[longest[0]]] if len(longest) == 1 else []
    inside = [u for u in github if f"-{u}-" in f"-{name}-"]
    return [github[inside[0]]] if len(inside) == 1 else []


def _unique(students):
    return list({s.key: s for s in students}.values())


def _last_first(name):
    parts = name.split()
    return " ".join(parts[-1:] + parts[:-1]) if len(parts) > 1 else name
