"""torch.optim.optimizer: Optimizer and the global step hooks."""

import functools
import os

import torch

_pre_hooks = {}
_post_hooks = {}


class _RemovableHandle:
    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)


def _register(hooks, hook):
    handle = _RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


if os.environ.get("MERIDIAN_FAKE_TORCH_STEP_HOOKS", "1") != "0":
    def register_optimizer_step_pre_hook(hook):
        return _register(_pre_hooks, hook)

    def register_optimizer_step_post_hook(hook):
        return _register(_post_hooks, hook)


def _step_with_hooks(step):
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        name = "Optimizer.step#%s.step" % type(self).__name__
        with torch.autograd.profiler.record_function(name):
            for hook in list(_pre_hooks.values()):
                hook(self, args, kwargs)
            out = step(self, *args, **kwargs)
            for hook in list(_post_hooks.values()):
                hook(self, args, kwargs)
            return out
    wrapper.hooked = True
    return wrapper


class Optimizer:
    def __init__(self, params, defaults=None):
        self.param_groups = [{"params": list(params)}]
        self.steps_taken = 0
        if not getattr(type(self).step, "hooked", False):
            type(self).step = _step_with_hooks(type(self).step)

    def step(self, closure=None):
        raise NotImplementedError
