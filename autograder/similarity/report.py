"""similarity.html and --json: one set of data, for an instructor who decides and for scripts.

The page says what it shows (code in common) and what it does not (whether
anyone copied): no word on it is a verdict.  It lives in the grades folder
for the teaching team; nothing from it reaches a feedback page, an LMS file
or the student bundle (no later stage imports this one: tests/test_layout.py).
"""

import bisect
import os
from dataclasses import dataclass

from markupsafe import Markup, escape

from ..core.render import render

NO_VERDICT = ("This page shows how much code pairs of hand-ins have in common, not whether anyone copied. "
              "Students who solve the same short exercise often write the same lines, and a shared source (a "
              "tutorial, a tutor, the lecture) makes hand-ins alike too. A person decides, after reading the "
              "code and talking to the students.")


@dataclass
class SimilarityResult:
    assignment: object
    documents: list         # documents.Document, the class's first
    pairs: list             # ranking.Pair, most similar first
    groups: list            # clusters: lists of document indices
    threshold: float
    shown: int              # pairs shown side by side, the most similar
    weight: dict            # fingerprint -> weight
    seconds: float = 0.0

    def data(self):
        """The page's data as plain JSON values (`--json`).

        Each part is built once, in one pass at most over the pairs: a class of 1,000 has 500,000 of them,
        and a pass per document (as `i not in dict(self.nearest())` in the "alone" list was) made the page
        take minutes after a comparison of seconds (tests/similarity/test_page_cost.py counts the passes).
        """
        docs = self.documents
        compared = [d for d in docs if d.pieces]
        nearest = self.nearest()
        has_nearest = {i for i, _ in nearest}
        return {
            "assignment": self.assignment.id,
            "note": NO_VERDICT,
            "threshold": self.threshold,
            "documents": len(docs),
            "compared": len(compared),
            "pairs_with_code_in_common": len(self.pairs),
            "pairs_at_or_above_threshold": self.at_or_above(),
            "not_compared": [{"who": d.key, "label": d.label, "why": d.note} for d in docs if not d.pieces],
            "pairs": [self._pair(p, detail=True) for p in self.pairs[:self.shown]],
            "nearest": [{"who": docs[i].key, "label": docs[i].label, **self._pair(p, detail=False)}
                        for i, p in nearest],
            # Compared, and in common with nobody: listed, never left out.
            "alone": [{"who": d.key, "label": d.label} for i, d in enumerate(docs)
                      if d.origin == "class" and d.pieces and i not in has_nearest],
            "notes": [{"who": d.key, "label": d.label, "note": d.note} for d in docs if d.pieces and d.note],
            "clusters": [[docs[i].key for i in group] for group in self.groups],
        }

    def at_or_above(self, threshold=None):
        """How many pairs are at or above `threshold` (the page's line): the pairs are most similar first."""
        threshold = self.threshold if threshold is None else threshold
        return bisect.bisect_right(self.pairs, -threshold, key=lambda pair: -pair.similarity)

    def nearest(self):
        """[(document index, its most similar pair)] for each class document with code in common."""
        best = {}
        # A document with code in common is in some pair; once each has its nearest, the rest cannot change it.
        wanted = sum(1 for d in self.documents if d.origin == "class" and d.pieces)
        for pair in self.pairs:       # most similar first: the first pair a document is in is its nearest
            for i in (pair.a, pair.b):
                if self.documents[i].origin == "class":
                    best.setdefault(i, pair)
            if len(best) == wanted:
                break
        return sorted(best.items(), key=lambda item: (item[1].rank, item[0]))

    def _pair(self, pair, detail):
        a, b = self.documents[pair.a], self.documents[pair.b]
        out = {"rank": pair.rank, "a": a.key, "b": b.key, "a_label": a.label, "b_label": b.label,
               "similarity": pair.similarity, "share_a": pair.share_a, "share_b": pair.share_b}
        if detail:
            shared = a.hashes & b.hashes
            out["a_spans"] = _spans(a, shared)
            out["b_spans"] = _spans(b, shared)
        return out


def _spans(document, shared):
    """[{kind, name, spans: [[start, end]]}] of each piece holding code in common."""
    found = []
    for piece in document.pieces:
        spans = piece.spans(shared)
        if spans:
            found.append({"kind": piece.kind, "name": piece.name, "spans": [list(s) for s in spans]})
    return found


def highlighted(text, spans):
    """`text` escaped, with each span in <mark>."""
    out, at = [], 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        out += [escape(text[at:start]), Markup("<mark>"), escape(text[start:end]), Markup("</mark>")]
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)


LOOKUP_MAX = 100_000    # pairs the page's look-up holds (most similar first): 1.5 MB of data at most


def lookup_data(result):
    """What the page's look-up of any two students needs: labels, and [a, b, similarity in thousandths]."""
    pairs = [[p.a, p.b, round(p.similarity * 1000)] for p in result.pairs[:LOOKUP_MAX]]
    return {"labels": [d.label for d in result.documents], "pairs": pairs, "total": len(result.pairs),
            "class": [i for i, d in enumerate(result.documents) if d.origin == "class" and d.pieces]}


def page_context(result, course_name, threshold_text):
    data = result.data()
    docs = {d.key: d for d in result.documents}

    def side(key, spans):
        pieces = {(p.kind, p.name): p for p in docs[key].pieces}
        return [{"where": f"cell {s['name']}" if s["kind"] == "cell" else s["name"],
                 "code": highlighted(pieces[(s["kind"], s["name"])].text, s["spans"])} for s in spans]

    pairs = []
    for pair in data["pairs"]:
        pairs.append(dict(pair, percent=_percent(pair["similarity"]), a_percent=_percent(pair["share_a"]),
                          b_percent=_percent(pair["share_b"]), above=pair["similarity"] >= result.threshold,
                          a_code=side(pair["a"], pair["a_spans"]), b_code=side(pair["b"], pair["b_spans"])))
    line = next((i for i, p in enumerate(pairs) if not p["above"]), len(pairs))
    labels = {d.key: d.label for d in result.documents}
    return dict(title=result.assignment.title, assignment_id=result.assignment.id, course=course_name,
                note=NO_VERDICT, threshold=threshold_text, pairs=pairs, line=line,
                total_pairs=len(result.pairs), documents=data["documents"], compared=data["compared"],
                above=data["pairs_at_or_above_threshold"],
                nearest=[dict(n, percent=_percent(n["similarity"]),
                              other=n["b_label"] if n["who"] == n["a"] else n["a_label"]) for n in data["nearest"]],
                clusters=[[labels[k] for k in group] for group in data["clusters"]],
                not_compared=data["not_compared"], alone=data["alone"], notes=data["notes"],
                lookup=lookup_data(result))


def write_page(result, path, course_name):
    """Write the page whole or not at all: a Ctrl-C midway leaves the previous page as it was."""
    text = render("similarity.html.j2", **page_context(result, course_name, _percent(result.threshold)))
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path


def _percent(value):
    return f"{round(100 * value)}%"
