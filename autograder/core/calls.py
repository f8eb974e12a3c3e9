"""A case's call, written as Python text ("is_solved(list(range(15)))").

The text is what students and the rubric see; here it is parsed, without
eval, into a function name and argument values, and the values are encoded
for the trip into the sandbox.  Arguments may be literals or a few safe
constructors: list, tuple, range, set, and np.array / numpy.array.
"""

import ast
import sys
from dataclasses import dataclass


def _array(*args):
    # numpy is imported only for a case that builds an array: importing it took about 0.14 s of every verb's start
    # (python -X importtime), and most assignments never name it.
    import numpy
    return numpy.array(*args)


_CONSTRUCTORS = {
    "list": list,
    "tuple": tuple,
    "range": range,
    "set": set,
    "frozenset": frozenset,
    "np.array": _array,
    "numpy.array": _array,
}


class CallError(ValueError):
    """A case's call text is not something we can run safely."""


@dataclass(frozen=True)
class Call:
    text: str
    function: str
    args: tuple
    kwargs: dict

    def encoded(self):
        """The call as JSON-able data for the worker."""
        return {
            "function": self.function,
            "args": [encode(a) for a in self.args],
            "kwargs": {k: encode(v) for k, v in self.kwargs.items()},
        }


def parse_call(text):
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise CallError(f"{text!r} is not a Python call: {error.msg}") from None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallError(f"{text!r} must be a call of one function by name, like f(1, 2)")
    args = tuple(_value(a, text) for a in node.args)
    kwargs = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallError(f"{text!r}: **kwargs are not supported")
        kwargs[keyword.arg] = _value(keyword.value, text)
    return Call(text.strip(), node.func.id, args, kwargs)


def _value(node, text):
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name not in _CONSTRUCTORS or node.keywords:
            raise CallError(f"{text!r}: {name}(...) is not one of {sorted(_CONSTRUCTORS)}")
        return _CONSTRUCTORS[name](*(_value(a, text) for a in node.args))
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise CallError(f"{text!r}: {ast.unparse(node)} is not a literal value") from None


def encode(value):
    """Arguments to tagged JSON; the worker's `decode` is the inverse."""
    kind = type(value)
    if kind is tuple:
        return {"__tuple__": [encode(v) for v in value]}
    if kind is list:
        return [encode(v) for v in value]
    if kind is dict:
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind in (set, frozenset):
        return {"__set__": [encode(v) for v in value], "frozen": kind is frozenset}
    if kind is range:
        return {"__range__": [value.start, value.stop, value.step]}
    numpy = sys.modules.get("numpy")      # an array exists only once numpy has been imported
    if numpy is not None and kind is numpy.ndarray:
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if value is None or kind in (bool, int, float, str):
        return value
    raise CallError(f"cannot send a {kind.__name__} to the sandbox")
