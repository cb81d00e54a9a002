"""Meridian's probe API for Python: steps, phases, queue phases, instants and
counters, recorded by libmeridian_probe.so into the node agent's rings.

Pure ctypes, no compiled extension. Under `meridian run` the library is
already loaded (LD_PRELOAD) and this module binds to it; otherwise it loads
$MERIDIAN_PROBE_LIB if set, and if the library cannot be found every call
does nothing, so annotated programs run untraced unchanged.

    import meridian_probe as mp
    for step in range(steps):
        with mp.step(step):
            with mp.phase("forward"):
                ...
            mp.counter("loss", loss)
"""

import contextlib
import ctypes
import os

_lib = None


def _load():
    for name in ("libmeridian_probe.so", os.environ.get("MERIDIAN_PROBE_LIB")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.meridian_enabled.restype = ctypes.c_int
        lib.meridian_now_ns.restype = ctypes.c_uint64
        lib.meridian_step_begin.argtypes = [ctypes.c_int64]
        lib.meridian_phase_begin.argtypes = [ctypes.c_char_p]
        lib.meridian_queue_phase.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64,
            ctypes.c_uint64, ctypes.c_int64, ctypes.c_int32]
        lib.meridian_instant.argtypes = [ctypes.c_char_p]
        lib.meridian_counter.argtypes = [ctypes.c_char_p, ctypes.c_double]
        return lib
    return None


_lib = _load()


def _b(s):
    return s.encode() if isinstance(s, str) else s


def enabled():
    """True if this process records for a node agent."""
    return bool(_lib and _lib.meridian_enabled())


def now_ns():
    """The probe's clock (CLOCK_MONOTONIC ns), for queue_phase times."""
    return _lib.meridian_now_ns() if _lib else 0


def step_begin(step):
    if _lib:
        _lib.meridian_step_begin(step)


def step_end():
    if _lib:
        _lib.meridian_step_end()


def phase_begin(name):
    if _lib:
        _lib.meridian_phase_begin(_b(name))


def phase_end():
    if _lib:
        _lib.meridian_phase_end()


def queue_phase(queue, phase, start_ns, end_ns, nbytes=0, partition=-1):
    """A phase of a queued operation on its own track named `queue` (None:
    this thread), e.g. queue_phase("grad.fc1", "NEGOTIATE_ALLREDUCE", t0, t1).
    """
    if _lib:
        _lib.meridian_queue_phase(_b(queue) if queue is not None else None,
                                  _b(phase), start_ns, end_ns, nbytes,
                                  partition)


def instant(name):
    if _lib:
        _lib.meridian_instant(_b(name))


def counter(name, value):
    if _lib:
        _lib.meridian_counter(_b(name), float(value))


@contextlib.contextmanager
def step(number):
    step_begin(number)
    try:
        yield
    finally:
        step_end()


@contextlib.contextmanager
def phase(name):
    phase_begin(name)
    try:
        yield
    finally:
        phase_end()
