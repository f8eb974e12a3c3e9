"""Small steps over a notebook, each doing one thing (in the manner of nbgrader).

Each step is a function `step(notebook, context) -> notebook` that works on a
copy-safe nbformat NotebookNode; student_notebook.py chains them.
"""
