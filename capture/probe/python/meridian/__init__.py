"""Meridian's probe API for Python (pure ctypes, no compiled extension).

    import meridian
    meridian.auto_steps()                 # PyTorch: a step per optimizer.step()
    meridian.capture_record_functions()   # torch.profiler.record_function ranges as phases
    # torch.distributed's collectives: recorded with no call (collectives.py)
    for batch in loader:
        with meridian.record_function("forward"):
            ...
        meridian.counter("loss", loss)

    for batch in meridian.steps(loader):  # without PyTorch: each item a step
        with meridian.phase("forward"):
            ...

The calls record into libmeridian_probe.so, which `meridian run` preloads;
meridian/library.py says where else it is looked for (probe_library() says
which was found). Without it every call does nothing, so an annotated
program runs untraced unchanged. In a traced process, importing it also
lets the node agent read a stuck thread's Python stack (stacks.py).
"""

from .collectives import capture_collectives, start_automatically
from .probe import (counter, enabled, instant, now_ns, phase, phase_begin,
                    phase_end, probe_library, queue_phase, step, step_begin,
                    step_end)
from .profiler import capture_record_functions, record_function
from .stacks import register as _register_python_stacks
from .steps import auto_steps, steps

__version__ = "0.1.0"

__all__ = [
    "auto_steps", "capture_collectives", "capture_record_functions", "counter",
    "enabled", "instant", "now_ns", "phase", "phase_begin", "phase_end", "probe_library",
    "queue_phase", "record_function", "step", "step_begin", "step_end",
    "steps",
]

start_automatically()
if enabled():
    _register_python_stacks()  # for `meridian health` (stacks.py)
