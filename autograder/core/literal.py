"""Write a plain value as Python source that reads well in a notebook cell."""


def python_literal(value, indent=0):
    """repr(), except that a multi-line string is split at its newlines."""
    if type(value) is str and "\n" in value:
        pad = " " * indent
        parts = value.splitlines(keepends=True)
        return "(\n" + "".join(f"{pad}{part!r}\n" for part in parts) + " " * (indent - 4) + ")"
    return repr(value)
