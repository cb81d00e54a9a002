"""The probe's C API (meridian/probe.h) for Python: steps, phases, queue
phases, instants and counters, recorded by libmeridian_probe.so into the
node agent's rings. Without the library (meridian/library.py says where it
is looked for) every function here does nothing and returns at once.
"""

import contextlib

from . import library

_lib = library.load()


def _b(text):
    """UTF-8 bytes of a name; never raises (a tracer must not break the
    program it traces)."""
    if isinstance(text, bytes):
        return text
    return str(text).encode("utf-8", "replace")


def probe_library():
    """The path of the probe library this process records through, or None
    if none was found."""
    return library.path_of(_lib) if _lib is not None else None


def enabled():
    """True if this process records for a node agent."""
    return _lib is not None and bool(_lib.meridian_enabled())


def now_ns():
    """The probe's clock (CLOCK_MONOTONIC ns), for queue_phase times; 0
    without the probe."""
    return _lib.meridian_now_ns() if _lib is not None else 0


def step_begin(number):
    """Training step `number` begins: what is recorded until step_end()
    carries it."""
    if _lib is not None:
        _lib.meridian_step_begin(number)


def step_end():
    """The open step ends; it is recorded as a span named "step" if it was
    recorded whole (not one a `meridian trace --seconds` window opened or
    closed in)."""
    if _lib is not None:
        _lib.meridian_step_end()


def phase_begin(name):
    """A phase of this thread begins; phases nest, up to 32 deep."""
    if _lib is not None:
        _lib.meridian_phase_begin(_b(name))


def phase_end():
    """This thread's innermost open phase ends."""
    if _lib is not None:
        _lib.meridian_phase_end()


def queue_phase(queue, phase, start_ns, end_ns, nbytes=0, partition=-1):
    """A phase of a queued operation on its own track named `queue` (None:
    this thread), e.g. queue_phase("grad.fc1", "NEGOTIATE_ALLREDUCE", t0, t1).
    """
    if _lib is not None:
        _lib.meridian_queue_phase(_b(queue) if queue is not None else None,
                                  _b(phase), start_ns, end_ns, nbytes,
                                  partition)


def instant(name):
    """A point in time on this thread."""
    if _lib is not None:
        _lib.meridian_instant(_b(name))


def counter(name, value):
    """A sampled value ("loss", "tokens/s")."""
    if _lib is not None:
        _lib.meridian_counter(_b(name), float(value))


@contextlib.contextmanager
def step(number):
    """`with step(n):` marks training step n."""
    step_begin(number)
    try:
        yield
    finally:
        step_end()


@contextlib.contextmanager
def phase(name):
    """`with phase("forward"):` marks a phase of this thread."""
    phase_begin(name)
    try:
        yield
    finally:
        phase_end()
