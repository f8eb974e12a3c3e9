"""Charts for the class report, drawn with matplotlib's Agg renderer and embedded as PNG data URIs.

Figures are made with matplotlib.figure.Figure directly (no pyplot), so
nothing global changes and no display is needed.
"""

import base64
import io

import numpy as np

OK, BAD, HIDDEN = "#1a7f37", "#cf222e", "#8250df"


def new_figure(**size):
    """matplotlib's Figure, loaded when a chart is drawn, not by every command that imports this module's colours
    (`release` and `roster`, through the semester report: 0.4 CPU-s at each start)."""
    from matplotlib.figure import Figure
    return Figure(**size)


def data_uri(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def score_histogram(scores, max_score, step=0.5):
    """Bars of how many students scored in each `step`-wide band from 0 to max_score."""
    edges = np.arange(0.0, max_score + step, step)
    if edges[-1] < max_score:
        edges = np.append(edges, max_score)
    counts, edges = np.histogram(np.clip(scores, 0, max_score), bins=edges)
    figure = new_figure(figsize=(7, 3.2))
    axes = figure.add_subplot()
    axes.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color=OK, edgecolor="white")
    axes.set_xlim(0, max_score)
    axes.set_xticks(edges)
    axes.set_xticklabels([f"{e:g}" for e in edges], fontsize=8)
    axes.set_xlabel(f"score (out of {max_score:g})")
    axes.set_ylabel("students")
    axes.yaxis.get_major_locator().set_params(integer=True)
    for left, width, count in zip(edges[:-1], np.diff(edges), counts):
        if count:
            axes.text(left + width / 2, count, str(int(count)), ha="center", va="bottom", fontsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return data_uri(figure)


def pass_rates(labels, rates, hidden, narrow=False):
    """One horizontal bar per case: the share of students who passed it (0..1).

    `narrow`: drawn for a phone's width (about 360 px): shorter labels, and the same font sizes on a
    figure half as wide, so the text is as large on the screen as on a wide one."""
    height = max(2.5, 0.28 * len(labels) + 1.0)
    figure = new_figure(figsize=(3.6 if narrow else 8, height))
    axes = figure.add_subplot()
    positions = np.arange(len(labels))[::-1]
    colors = [HIDDEN if h else OK for h in hidden]
    axes.barh(positions, [100 * r for r in rates], color=colors, height=0.7)
    axes.set_yticks(positions)
    axes.set_yticklabels([_short(label, 24 if narrow else 60) for label in labels], fontsize=8)
    axes.set_xlim(0, 100)
    axes.set_xlabel("students who passed (%)")
    for position, rate in zip(positions, rates):
        axes.text(min(100 * rate + 1, 92), position, f"{100 * rate:.0f}%", va="center", fontsize=7)
    axes.spines[["top", "right"]].set_visible(False)
    if any(hidden):
        from matplotlib.patches import Patch
        axes.legend(handles=[Patch(color=OK, label="public"), Patch(color=HIDDEN, label="hidden")],
                    loc="lower right", fontsize=8, frameon=False, bbox_to_anchor=(1.0, 1.0), ncol=2)
    return data_uri(figure)


def _short(label, width=60):
    return label if len(label) <= width else label[:width - 1] + "…"
