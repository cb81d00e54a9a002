"""A stand-in for PyTorch with only what Meridian's Python package uses
(tests/python_package_test.sh): torch.optim.Optimizer and its step(), the
global step hooks, and torch.profiler.record_function. Not torch: no
tensors, and nothing here is copied from it; the shapes follow torch 2.x's
documented API (an Optimizer's class step() is wrapped at the first
construction to open the range "Optimizer.step#<class>.step" and call the
global pre and post hooks inside it).

MERIDIAN_FAKE_TORCH_STEP_HOOKS=0 mimics a torch before 2.0: the wrapper
opens the range but there are no global step hooks to register.
"""

from . import autograd, optim, profiler  # noqa: F401
