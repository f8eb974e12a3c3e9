"""Put an "Open in Colab" badge, pointing at the student notebook on GitHub, first."""

import nbformat

TAG = "colab-badge"


def badge_markdown(url):
    return (f'<a href="{url}" target="_parent"><img '
            'src="https://colab.research.google.com/assets/colab-badge.svg" alt="Open In Colab"/></a>')


def colab_badge(notebook, context):
    notebook.cells = [c for c in notebook.cells if TAG not in c.metadata.get("tags", [])]
    cell = nbformat.v4.new_markdown_cell(badge_markdown(context.colab_url))
    cell.id = "colab-badge"
    cell.metadata["tags"] = [TAG]
    notebook.cells.insert(0, cell)
    return notebook
