"""Drop cells tagged `reference-only` (instructor notes, answer plots)."""


def drop_reference_only(notebook, context):
    notebook.cells = [c for c in notebook.cells if "reference-only" not in c.metadata.get("tags", [])]
    return notebook
