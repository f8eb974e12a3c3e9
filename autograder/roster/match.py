"""Whose hand-in is it, on the roster?

A hand-in's key comes from the LMS's download (intake/identity.py).  It is
matched to a roster student by, in this order:
  1. the same key (Canvas `canvas:<user id>`, Gradescope `gradescope:<sid>`, a Classroom login);
  2. an alias the LMS gave (Moodle's per-assignment participant id, from its grading worksheet);
  3. the LMS's id against the roster's LMS or SIS id;
  4. email, then login;
  5. the name, only when exactly one roster student has it (Canvas writes "smithjane", Moodle "Jane
     Smith"): a name is what a student chooses, so the match is said, never silent.
A hand-in that matches nobody keeps its own key and its row, and is named in
the run's notes; so is a name two roster students share.
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
        if self.unmatched:
            notes.append(f"{len(self.unmatched)} hand-in(s) match nobody on the roster and keep their own rows "
                         f"(marked `not on the roster`): {', '.join(self.unmatched[:8])}"
                         + (" ..." if len(self.unmatched) > 8 else ""))
        return notes


def folded(name):
    """A name as Canvas writes it in a file name: letters and digits only, lower case, no accents."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", plain.lower())


def match(handins, students, aliases):
    """Match each hand-in (intake.collect.Handin) to a roster Student; returns a Matching."""
    result = Matching()
    hows = {}  # hand-in key -> how it matched, and the hand-in's name
    index = {}
    for student in students:
        for kind, value in (("key", student.key), ("id", student.lms_id), ("id", student.sis_id),
                            ("email", student.email.casefold()), ("login", student.login.casefold())):
            if value:
                index.setdefault((kind, value), []).append(student)
        for name in {student.name, student.sortable_name, _last_first(student.name)}:
            if folded(name):
                index.setdefault(("name", folded(name)), []).append(student)
    for alias, key in aliases.items():
        index.setdefault(("alias", alias), []).extend(s for s in students if s.key == key)
    for handin in handins:
        if handin.student in result.matched:
            continue
        found, how = None, None
        for kind, value in (("key", handin.student), ("alias", handin.student), ("id", handin.lms_id),
                            ("email", handin.email.casefold()), ("login", handin.student.casefold()),
                            ("name", folded(handin.name))):
            candidates = _unique(index.get((kind, value), ())) if value else []
            if len(candidates) == 1:
                found, how = candidates[0], kind
                break
            if len(candidates) > 1 and kind == "name":
                result.ambiguous.append((handin.name, candidates))
                break
        if found is None:
            if not any(name == handin.name for name, _ in result.ambiguous):
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


def _unique(students):
    return list({s.key: s for s in students}.values())


def _last_first(name):
    parts = name.split()
    return " ".join(parts[-1:] + parts[:-1]) if len(parts) > 1 else name
