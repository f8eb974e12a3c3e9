"""Jinja2 templates from autograder/core/templates, to HTML (autoescaped) and Markdown.

HTML templates end in .html.j2 and are always autoescaped; Markdown ones
(.md.j2) are not, so every value from a hand-in goes through the `md` filter
(plain text) or the `fence` filter (a code block no content can close).

Every value a page shows, and every string of the JSON a page's script reads,
has its bidirectional control characters made visible (`visible_controls`):
applied, U+202E reverses the rest of a line for the reader, so a student's
code or name could read as what it is not (Trojan Source, CVE-2021-42574).
"""

import json
import re
from pathlib import Path

import jinja2
import markupsafe

TEMPLATES = Path(__file__).resolve().parent / "templates"
# The embeddings, overrides and isolates of Unicode's bidirectional algorithm, and its three marks.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def visible_controls(text):
    """`text` with each bidirectional control character shown as its code point, `⟨U+202E⟩`, never applied."""
    return _BIDI.sub(lambda match: f"⟨U+{ord(match.group()):04X}⟩", text)


def _finalize(value):
    """What every `{{ ... }}` of a page prints: its bidirectional controls made visible (markup stays markup:
    what replaces them holds no character markup reads)."""
    if isinstance(value, str) and _BIDI.search(value):
        shown = visible_controls(str(value))
        return markupsafe.Markup(shown) if isinstance(value, markupsafe.Markup) else shown
    return value


def _visible_json(value):
    if isinstance(value, str):
        return visible_controls(value)
    if isinstance(value, dict):
        return {_visible_json(k): _visible_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_visible_json(v) for v in value]
    return value


def _dumps(value, **options):
    """`tojson`'s: a page's script puts these strings in the page too."""
    return json.dumps(_visible_json(value), **options)


def _md(text):
    """Plain text safe inside Markdown: no markup, no raw HTML, one line."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|~])", r"\\\1", text)


def _md_code(text):
    """Our own sentences in Markdown: plain text as `md` makes it, with `backticked` parts as inline code
    (so "fix `get_n` first" shows code, not backslashes).  Whatever a hand-in put inside stays text."""
    parts = re.sub(r"\s+", " ", str(text)).strip().split("`")
    if len(parts) % 2 == 0:                    # an unpaired backtick: nothing is code
        return _md(str(text))
    return "".join(_code(part) if i % 2 else _md_part(part) for i, part in enumerate(parts))


def _md_part(text):
    """`md` without its trimming: the spaces around an inline code span are kept."""
    lead, trail = " " if text[:1] == " " else "", " " if text[-1:] == " " else ""
    return f"{lead}{_md(text)}{trail}" if text.strip() else text


def _code(text):
    """Inline code, safe in a table cell: a backtick run longer than any inside, pipes escaped."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(text, language=""):
    """A fenced code block longer than any run of backticks inside."""
    text = str(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _inline_code(text):
    """HTML for our own sentences: escaped, with `backticked` parts as <code>."""
    parts = str(markupsafe.escape(text)).split("`")
    return markupsafe.Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


def environment():
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2", "html"), default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.policies["json.dumps_function"] = _dumps
    env.filters["md"] = _md
    env.filters["fence"] = _fence
    env.filters["code"] = _code
    env.filters["md_code"] = _md_code
    env.filters["inline_code"] = _inline_code
    return env


_ENV = None


def render(template, **context):
    global _ENV
    if _ENV is None:
        _ENV = environment()
    return _ENV.get_template(template).render(**context)
