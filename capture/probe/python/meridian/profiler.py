"""torch.profiler.record_function ranges as Meridian phases.

capture_record_functions() makes every range that Python code opens with
torch.profiler.record_function (the same class as
torch.autograd.profiler.record_function; as a `with` block, a decorator or
by calling __enter__/__exit__) also a Meridian phase of the thread that
opened it, named as the range. That includes the ranges torch opens from
Python itself, such as "Optimizer.step#SGD.step",
"Optimizer.zero_grad#SGD.zero_grad", "enumerate(DataLoader)#...__next__"
and torch.profiler.profile's "ProfilerStep#N". It does not include the
ranges torch opens in C++ (every aten:: operator: only torch's own profiler
sees those), nor ranges in TorchScript; under torch.compile it has not been
tested. A phase ends when the range's __exit__ runs (for a range handed to
_call_end_callbacks_on_future, when the `with` block is left, not when the
future completes). It works with or without torch.profiler.profile running.

record_function(name) is a Meridian phase that also opens torch's
record_function of the same name when torch is imported, so that both
Meridian and torch's profiler see it; without torch it is just the phase.
"""

import functools
import sys
import threading
import warnings

from . import hooks
from .probe import phase_begin, phase_end

# The captured ranges open on each thread, innermost last.
_open = threading.local()
_capture = hooks.Hook()


def _open_ranges():
    ranges = getattr(_open, "ranges", None)
    if ranges is None:
        ranges = _open.ranges = []
    return ranges


def _range_entered(torch_range):
    if getattr(torch_range, "_meridian_skip", False):
        return  # a meridian.record_function's own: it records the phase
    phase_begin(getattr(torch_range, "name", "record_function"))
    _open_ranges().append(torch_range)


def _range_exiting(torch_range):
    ranges = _open_ranges()
    for i in range(len(ranges) - 1, -1, -1):
        if ranges[i] is torch_range:
            del ranges[i]
            phase_end()
            then = torch_range.__dict__.pop("_meridian_after_exit", None)
            if then is not None:
                then()
            return


def capture_record_functions():
    """Records every torch.profiler.record_function range opened from now on
    as a Meridian phase (see above). Returns a Hook; remove() it outside any
    such range. Without torch: a warning and an inactive Hook.
    """
    global _capture
    if _capture.active:
        return _capture
    torch = hooks.import_torch()
    if torch is None:
        warnings.warn("meridian.capture_record_functions(): torch is not "
                      "importable; use meridian.record_function(name)",
                      RuntimeWarning, stacklevel=2)
        return hooks.Hook()
    torch_class = torch.profiler.record_function
    enter, exit_ = torch_class.__enter__, torch_class.__exit__

    @functools.wraps(enter)
    def __enter__(self):
        result = enter(self)
        _range_entered(self)
        return result

    @functools.wraps(exit_)
    def __exit__(self, *exc_info):
        _range_exiting(self)
        return exit_(self, *exc_info)

    torch_class.__enter__, torch_class.__exit__ = __enter__, __exit__

    def undo():
        if torch_class.__dict__.get("__enter__") is __enter__:
            torch_class.__enter__ = enter
        if torch_class.__dict__.get("__exit__") is __exit__:
            torch_class.__exit__ = exit_

    _capture = hooks.Hook(undo)
    return _capture


def enclosing_optimizer_range():
    """The captured "Optimizer.step#..." range torch opened around the
    optimizer step running on this thread (torch opens it before the step's
    hooks run), or None."""
    ranges = _open_ranges()
    if ranges and str(getattr(ranges[-1], "name", "")).startswith(
            "Optimizer.step#"):
        return ranges[-1]
    return None


def call_after_exit(torch_range, then):
    """Calls then() once `torch_range`, open on this thread, has ended its
    phase; False (and then() not called) if it is not open."""
    if not any(r is torch_range for r in _open_ranges()):
        return False
    torch_range.__dict__["_meridian_after_exit"] = then
    return True


class record_function:
    """`with meridian.record_function("forward"):` or
    `@meridian.record_function("forward")`: a Meridian phase, and torch's
    record_function of the same name where torch is imported."""

    def __init__(self, name):
        self.name = name
        self._torch_ranges = []  # one per open use, innermost last

    def __enter__(self):
        torch_range = _torch_range(self.name)
        if torch_range is not None:
            torch_range._meridian_skip = True
            torch_range.__enter__()
        self._torch_ranges.append(torch_range)
        phase_begin(self.name)
        return self

    def __exit__(self, *exc_info):
        phase_end()
        torch_range = self._torch_ranges.pop()
        if torch_range is not None:
            torch_range.__exit__(*exc_info)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def recorded(*args, **kwargs):
            with record_function(self.name):
                return function(*args, **kwargs)
        return recorded


def _torch_range(name):
    """torch's record_function(name) if the program imported torch (this
    never imports it: that takes seconds), else None."""
    torch = sys.modules.get("torch")
    profiler = getattr(torch, "profiler", None)
    record = getattr(profiler, "record_function", None)
    return record(name) if record is not None else None
