"""What the package's hooks into other libraries share: the handle they
return, and torch, imported only where it is installed."""

import importlib


class Hook:
    """What auto_steps() and capture_record_functions() return.

    remove() undoes the hook (a second call does nothing); the handle is
    also a context manager that removes it on leaving. `active` is False
    once removed, and from the start where there was nothing to hook (torch
    not importable).
    """

    def __init__(self, undo=None):
        self._undo = undo

    @property
    def active(self):
        return self._undo is not None

    def remove(self):
        undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()
        return False


def import_torch():
    """The torch module, or None where it cannot be imported."""
    try:
        return importlib.import_module("torch")
    except Exception:  # a broken torch install must not break the program
        return None
