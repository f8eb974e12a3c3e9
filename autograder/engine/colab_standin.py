"""A stand-in for Colab's own `google.colab` module, so a notebook written in Colab runs where it is graded.

Colab notebooks mount Drive, upload and download files and tune their output
(`from google.colab import drive, files, output`); none of that exists outside
Colab, and an ImportError there would cost every line after it in its cell.
Here `google.colab` and any of its submodules import, and every function in
them does nothing: `drive.mount` mounts nothing, `files.upload()` returns no
file ({}), `files.download` sends nothing, `output.*`, `auth.*`, `userdata.get`
return None.  The feedback says so (intake/collect.py's COLAB_NOTE), since a
notebook that reads a file from Drive will not find it.

It is a finder at the END of sys.meta_path, installed in the zygote before any
worker exists: a real `google.colab`, had one been installed, would be found
first; a real `google` namespace package (protobuf's) keeps its other parts.
This file holds no state: the finder is a class, its modules are made on import.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

PACKAGE = "google.colab"


def _nothing(*args, **kwargs):
    """What every Colab call does when graded: nothing."""
    return None


def _upload(*args, **kwargs):
    """files.upload(): Colab returns {file name: bytes}; no file is ever uploaded here."""
    return {}


class _StandIn(types.ModuleType):
    """A module whose every public attribute is a function that does nothing (a package's: its submodule)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self.__name__ in ("google", PACKAGE):      # `from google.colab import drive`: the submodule
            try:
                return importlib.import_module(f"{self.__name__}.{name}")
            except ImportError:
                raise AttributeError(name) from None
        return _upload if (self.__name__, name) == (f"{PACKAGE}.files", "upload") else _nothing


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StandIn(spec.name, "Colab's module, a stand-in here: every function does nothing")
        if spec.name in ("google", PACKAGE):
            module.__path__ = []          # a package: its submodules come from the finder too
        return module

    def exec_module(self, module):
        pass


class ColabFinder(importlib.abc.MetaPathFinder):
    """Finds `google.colab` and its submodules (and `google`, when nothing else provides it)."""

    def find_spec(self, name, path=None, target=None):
        if name == "google" or name == PACKAGE or name.startswith(PACKAGE + "."):
            spec = importlib.machinery.ModuleSpec(name, _Loader(), is_package=name in ("google", PACKAGE))
            return spec
        return None


def install():
    """Put the finder last on sys.meta_path (once)."""
    if not any(isinstance(finder, ColabFinder) for finder in sys.meta_path):
        sys.meta_path.append(ColabFinder())
