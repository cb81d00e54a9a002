"""Python stacks for `meridian health` (docs/health.md).

When the node agent finds a traced thread stuck (in one call, or in none,
for its --stack-after-ms), it sends that thread a signal; faulthandler,
registered for the signal here, writes the stack of every Python thread,
the one that took the signal marked "Current thread", into an anonymous
file named "meridian-python-stacks-SIGNAL", which the agent reads through
/proc/PID/fd (agent/python_stacks.h). faulthandler's handler is C, so it
answers while the thread blocks in C (a collective's wait, a lock), where
a Python signal handler would never run; it neither stops nor ends the
process, and a system call it interrupts is restarted.

The signal is real-time (SIGRTMIN + 7), which no common runtime claims; if
the program or a library already handles it, nothing is registered.
MERIDIAN_PYTHON_STACKS=0: nothing is registered.
"""

import faulthandler
import os
import signal

SIGNAL = int(signal.SIGRTMIN) + 7

_fd = None


def register():
    """Registers the dump, once per process; True if registered now or
    before. Never raises: a tracer must not stop the program it traces."""
    global _fd
    try:
        if _fd is not None:
            return True
        if os.environ.get("MERIDIAN_PYTHON_STACKS", "1") == "0":
            return False
        if signal.getsignal(SIGNAL) != signal.SIG_DFL:
            return False  # a handler of the program's (None: set in C)
        fd = os.memfd_create("meridian-python-stacks-%d" % SIGNAL,
                             os.MFD_CLOEXEC)
        faulthandler.register(SIGNAL, file=fd, all_threads=True, chain=False)
        _fd = fd
        return True
    except Exception:  # no memfd_create, no faulthandler: no Python stacks
        return False
