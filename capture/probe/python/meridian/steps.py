"""Marking training steps without calling step_begin/step_end by hand.

steps(iterable): each item a step.

    for batch in meridian.steps(loader):   # steps 0, 1, 2...
        train(batch)

Step n begins when item n has been produced and ends when the loop asks
for the next item, or leaves (break, return, an exception). Producing an
item (data loading) therefore lies between steps, in none.

auto_steps(): with PyTorch, a step per optimizer.step().

    meridian.auto_steps()
    for batch in loader:
        loss = model(batch).sum(); loss.backward()
        optimizer.step()

Step `start` begins at the call; each optimizer.step() that returns ends
the open step and begins the next, so a step spans one iteration: data,
forward, backward and the optimizer. The step after the last
optimizer.step() stays open and is never recorded as a "step" span (the
probe records a step when it ends, and nothing says another iteration was
coming); what runs after the loop carries its number, and the analyses
leave it out (`meridian steps` lists only steps that ended). Likewise
anything recorded after optimizer.step() and before the next iteration's
work carries the next step's number: log an iteration's loss before
optimizer.step() to keep it in its step. remove() stops the
marking and leaves that step open.

Which optimizer.step() calls count: every optimizer's, or only
`optimizer`'s if given (with two optimizers per iteration, as in a GAN,
give the one that closes the iteration). A step() that runs inside another
optimizer's step() (a wrapper such as ZeroRedundancyOptimizer around its
inner optimizer) counts once, for the outer one. A step() that raises ends
no step, and an iteration whose step() is skipped (torch.cuda.amp.GradScaler
on inf or NaN gradients) joins the next step. Do not also mark steps by
hand while auto_steps() is active.

How: torch's global optimizer hooks (torch.optim.optimizer.
register_optimizer_step_pre_hook / _post_hook, torch 2.0 and later); on an
older torch, the step() methods of torch.optim.Optimizer and of its
subclasses defined at the time of the call are wrapped. When
capture_record_functions() is active, the step ends when torch's
"Optimizer.step#..." range around the step() ends, so that phase belongs to
the step it ran in.
"""

import functools
import warnings

from . import hooks, profiler
from .probe import step_begin, step_end

_auto = hooks.Hook()


def steps(iterable, start=0):
    """Yields the items of `iterable`, each iteration of the caller's loop a
    step numbered from `start` (see above)."""
    for number, item in enumerate(iterable, start):
        step_begin(number)
        try:
            yield item
        finally:
            step_end()


class _OptimizerSteps:
    """Step boundaries from the optimizer steps' before/after calls."""

    def __init__(self, optimizer, start):
        # False once removed: a wrapped step() that torch wrapped again
        # cannot be unwrapped, so it asks this.
        self.active = True
        self._only = optimizer
        self._next = start + 1
        self._outer = None  # the optimizer whose step() began first
        self._torch_range = None  # its "Optimizer.step#..." range, if captured

    def before(self, optimizer):
        if not self.active or (self._only is not None and
                               optimizer is not self._only):
            return
        if self._outer is None:
            self._outer = optimizer
            self._torch_range = profiler.enclosing_optimizer_range()

    def after(self, optimizer):
        if not self.active or optimizer is not self._outer:
            return
        self._outer = None
        torch_range, self._torch_range = self._torch_range, None
        if torch_range is None or not profiler.call_after_exit(
                torch_range, self._next_step):
            self._next_step()

    def _next_step(self):
        step_end()
        step_begin(self._next)
        self._next += 1


def _hook_step_hooks(optimizer_module, steps):
    """torch 2.0 and later: the global step hooks; None where absent."""
    register_pre = getattr(optimizer_module,
                           "register_optimizer_step_pre_hook", None)
    register_post = getattr(optimizer_module,
                            "register_optimizer_step_post_hook", None)
    if register_pre is None or register_post is None:
        return None

    def pre_hook(optimizer, args, kwargs):
        steps.before(optimizer)  # None: args and kwargs unchanged

    def post_hook(optimizer, args, kwargs):
        steps.after(optimizer)

    handles = [register_pre(pre_hook), register_post(post_hook)]

    def undo():
        for handle in handles:
            handle.remove()
    return undo


def _wrap_step_methods(optimizer_class, steps):
    """Older torch: wraps step() of `optimizer_class` and of its subclasses
    defined now, where each defines its own. Undone where the class still
    has the wrapper (torch wraps a class's step() again at its first
    construction; that wrapper stays, and ours then does nothing)."""
    classes, pending = [], [optimizer_class]
    while pending:
        cls = pending.pop()
        if cls not in classes:
            classes.append(cls)
            pending.extend(cls.__subclasses__())
    wrapped = []
    for cls in classes:
        original = cls.__dict__.get("step")
        if callable(original):
            cls.step = _wrapped_step(original, steps)
            wrapped.append((cls, original, cls.__dict__["step"]))

    def undo():
        for cls, original, step in wrapped:
            if cls.__dict__.get("step") is step:
                cls.step = original
    return undo


def _wrapped_step(original, steps):
    @functools.wraps(original)
    def step(self, *args, **kwargs):
        steps.before(self)
        result = original(self, *args, **kwargs)
        steps.after(self)
        return result
    return step


def auto_steps(optimizer=None, start=0):
    """Marks a step per optimizer.step() (see above) and begins step `start`.
    Returns a Hook. Without torch: a warning and an inactive Hook (use
    steps(iterable)). A second call while one is active returns that one.
    """
    global _auto
    if _auto.active:
        return _auto
    torch = hooks.import_torch()
    if torch is None:
        warnings.warn("meridian.auto_steps(): torch is not importable, so "
                      "there is no optimizer step to follow; mark steps with "
                      "`for item in meridian.steps(iterable)`",
                      RuntimeWarning, stacklevel=2)
        return hooks.Hook()
    marker = _OptimizerSteps(optimizer, start)
    undo = _hook_step_hooks(getattr(torch.optim, "optimizer", None), marker)
    if undo is None:
        undo = _wrap_step_methods(torch.optim.Optimizer, marker)
    step_begin(start)

    def stop():
        marker.active = False
        undo()
    _auto = hooks.Hook(stop)
    return _auto
