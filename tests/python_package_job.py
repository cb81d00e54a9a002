"""Records through the `meridian` package as pip installed it in a venv;
tests/python_package_test.sh runs it (with python -I, so that only the
venv's copy can be imported) and checks what the collector stored.

    python_package_job.py SCENARIO

Every scenario first prints one JSON line: where `meridian` was imported
from, the probe library it found and whether it records. Scenarios:
  loop          meridian.steps() over a list, and a loop left by break
  auto-steps    auto_steps() and capture_record_functions() with the fake
                torch of $MERIDIAN_TEST_FAKE_TORCH (hooks or, with
                MERIDIAN_FAKE_TORCH_STEP_HOOKS=0, wrapped step methods)
  wrapped       auto_steps() with an optimizer whose step() runs another's
  found         one step, one phase
  no-op         every call, none of which may raise or record
"""

import json
import os
import sys
import warnings

fake_torch = os.environ.get("MERIDIAN_TEST_FAKE_TORCH")
if fake_torch:
    sys.path.insert(0, fake_torch)

import meridian  # noqa: E402
import meridian_probe  # noqa: E402  (the old module name still works)

assert meridian_probe.step is meridian.step
print(json.dumps({"file": meridian.__file__,
                  "library": meridian.probe_library(),
                  "enabled": meridian.enabled()}), flush=True)


def loop():
    for item in meridian.steps(["a", "b", "c"]):
        with meridian.phase("work-" + item):
            pass
    for item in meridian.steps(range(100), start=10):
        if item == 1:  # step 11 ends here
            break
        with meridian.phase("early"):
            pass


def auto_steps():
    import torch
    meridian.capture_record_functions()
    hook = meridian.auto_steps()
    optimizer = torch.optim.SGD([1.0])
    for _ in range(3):
        with torch.profiler.record_function("forward"):
            pass
        with meridian.record_function("backward"):
            pass
        optimizer.step()
    hook.remove()
    assert not hook.active
    optimizer.step()  # a phase of the open step 3, not a step boundary
    with torch.profiler.record_function("after"):
        pass
    assert optimizer.steps_taken == 4
    # meridian.record_function opened torch's range too (each once).
    assert torch.autograd.profiler.opened.count("backward") == 3


def wrapped():
    import torch

    class Wrapping(torch.optim.Optimizer):
        def __init__(self, inner):
            super().__init__([])
            self.inner = inner

        def step(self, closure=None):
            self.inner.step()

    meridian.capture_record_functions()
    meridian.auto_steps()
    optimizer = Wrapping(torch.optim.SGD([1.0]))
    for _ in range(2):
        optimizer.step()


def found():
    with meridian.step(0):
        with meridian.phase("found"):
            pass


def no_op():
    """Every call; what each returns without a library."""
    assert isinstance(meridian.now_ns(), int)
    meridian.step_begin(0)
    meridian.phase_begin("p")
    meridian.phase_end()
    meridian.step_end()
    meridian.queue_phase("q", "NEGOTIATE", 1, 2, 3, 4)
    meridian.queue_phase(None, "NEGOTIATE", 1, 2)
    meridian.instant("i")
    meridian.counter("c", 1)
    with meridian.step(1), meridian.phase("p"):
        pass
    assert list(meridian.steps("ab")) == ["a", "b"]
    with meridian.record_function("r"):
        pass

    @meridian.record_function("decorated")
    def decorated(x):
        return x + 1
    assert decorated(1) == 2
    torch_importable = bool(fake_torch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        steps_hook = meridian.auto_steps()
        capture_hook = meridian.capture_record_functions()
    assert steps_hook.active == capture_hook.active == torch_importable
    assert len(caught) == (0 if torch_importable else 2), caught
    if torch_importable:
        import torch
        optimizer = torch.optim.SGD([1.0])
        with torch.profiler.record_function("r"):
            optimizer.step()
    with steps_hook, capture_hook:
        pass
    assert not steps_hook.active and not capture_hook.active


{"loop": loop, "auto-steps": auto_steps, "wrapped": wrapped, "found": found,
 "no-op": no_op}[sys.argv[1]]()
print("python package: done")
