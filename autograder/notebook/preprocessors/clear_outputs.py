"""Students get a notebook with no outputs and no execution counts."""


def clear_outputs(notebook, context):
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    return notebook
