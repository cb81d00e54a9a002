"""torch.distributed's collectives and point-to-point operations as Meridian
spans, on every backend (gloo, nccl, mpi, ucc): capture/torch's compiled
extension, meridian._torch_capture, registers torch RecordFunction
callbacks that record each c10d operation from its call to its work's
completion, with its bytes, process group, sequence number and root or peer
(docs/torch.md).

It starts by itself: `import meridian` in a traced process (under
`meridian run`) arranges for it to start as soon as torch.distributed is
imported (or at once if it already is), so a program that imports meridian
needs no call; MERIDIAN_TORCH_COLLECTIVES=0 turns that off.
capture_collectives() starts it by hand. MERIDIAN_TORCH_OPS=1 also records
every aten operator and autograd node as a phase of its thread (0.1: a
tenth of them, sampled).

The extension is looked for at $MERIDIAN_TORCH_EXTENSION, then as
_torch_capture*.so beside this file, then in the deploy/install.sh prefix of
the `meridian` program on PATH (PREFIX/lib/meridian/python/meridian/, where
install.sh builds it for Debian's torch; `pip install` of the package's
source archive builds it beside this file for the torch pip installs into,
or writes _torch_capture.txt there saying why it could not). Without it, or
with a torch it cannot read, one warning says why, and everything else
Meridian records is recorded as before.

Process groups are told to the extension as torch creates them (its
_new_process_group_helper, which init_process_group and new_group call, and
which every process calls in the same order), and forgotten as
destroy_process_group destroys them: their names and members' world ranks
give each group an id equal on every rank. At exit the extension is
stopped, recording what no work completed.
"""

import atexit
import functools
import importlib
import importlib.abc
import importlib.util
import inspect
import glob
import os
import shutil
import sys
import threading
import warnings
import weakref

from . import hooks
from .probe import enabled

_C10D = "torch.distributed.distributed_c10d"
# Reentrant: the import hook may start the capture while an import that
# capture_collectives() made holds it on the same thread.
_lock = threading.RLock()
_capture = hooks.Hook()
_extension = None
_registered = set()  # the process groups told to the extension
# Asynchronous operations' works (async_op=True calls, isend, irecv) -> the
# record of the operation each began (the extension's last_begun()): while
# one is waited for (Work.wait) it is its thread's call in flight again.
# Weak: a work dropped unwaited leaves nothing behind.
_begun = weakref.WeakKeyDictionary()
_work_type = None  # c10d's Work, once started


def _warn(message, stacklevel=3):
    """A warning that never raises (under -W error, say): a tracer must not
    stop the program it traces."""
    try:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)
    except Exception:
        try:
            sys.stderr.write("%s\n" % message)
        except Exception:
            pass


def _extension_path():
    """Where the extension is (see the top), or None."""
    path = os.environ.get("MERIDIAN_TORCH_EXTENSION")
    if path:
        return path
    places = [os.path.dirname(os.path.abspath(__file__))]
    program = shutil.which("meridian")
    if program is not None:  # a deploy/install.sh prefix's
        places.append(os.path.join(os.path.dirname(os.path.realpath(program)),
                                   "..", "lib", "meridian", "python",
                                   "meridian"))
    for place in places:
        found = sorted(glob.glob(os.path.join(place, "_torch_capture*.so")))
        if found:
            return os.path.normpath(found[0])
    return None


def _load_extension():
    """(module, None) or (None, why)."""
    path = _extension_path()
    if path is None:
        how = ("deploy/install.sh builds it for Debian's torch; for another, "
               "pip install the package's source archive with "
               "--no-binary meridian --no-build-isolation (docs/torch.md)")
        try:  # setup.py's note: why pip built none
            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   "_torch_capture.txt")) as f:
                return None, "its extension was %s (%s)" % (
                    f.read(4096).strip(), how)
        except OSError:
            pass
        return None, "its extension is not built (%s)" % how
    try:
        spec = importlib.util.spec_from_file_location(
            "meridian._torch_capture", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module, None
    except Exception as e:  # built for another torch or Python
        return None, "its extension %s does not load: %s" % (path, e)


def _operator_probability():
    """MERIDIAN_TORCH_OPS: 1 records every aten operator as a phase, a
    probability below 1 that share of them; unset or 0: none."""
    text = os.environ.get("MERIDIAN_TORCH_OPS", "0")
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 1:
        _warn("meridian: MERIDIAN_TORCH_OPS=%s is not a number from 0 to 1: "
              "operators are not recorded" % text, stacklevel=5)
        return 0.0
    return value


def _group_tables(c10d):
    """(group -> {world rank: group rank}, group -> name) of this torch."""
    world = getattr(c10d, "_world", None)  # torch 2.x keeps them here
    if world is not None and hasattr(world, "pg_group_ranks"):
        return world.pg_group_ranks, world.pg_names
    return getattr(c10d, "_pg_group_ranks", {}), getattr(c10d, "_pg_names", {})


def _register(group, name, backend, world_ranks):
    if group is None or group in _registered:
        return
    if _extension.register_group(group, str(name), str(backend),
                                 [int(r) for r in world_ranks]):
        _registered.add(group)


def _register_groups(c10d):
    """Tells the extension every process group torch knows of (those made
    before the capture started)."""
    ranks_of, names = _group_tables(c10d)
    for group, ranks in list(ranks_of.items()):
        if group not in names:
            continue
        try:
            backend = c10d.get_backend(group)
        except Exception:
            backend = "unknown"
        world_ranks = [r for r, _ in sorted(ranks.items(), key=lambda kv: kv[1])]
        _register(group, names[group], backend, world_ranks)


def _group_helper(helper, c10d):
    """c10d's _new_process_group_helper (which init_process_group and
    new_group call, however the program reached them), then the group it
    made registered: its name as torch gave it, its members from the
    call (none listed: the default group, ranks 0 to its size - 1)."""
    signature = inspect.signature(helper)

    @functools.wraps(helper)
    def made(*args, **kwargs):
        group = helper(*args, **kwargs)
        try:
            call = signature.bind(*args, **kwargs).arguments
            _, names = _group_tables(c10d)
            if group in names:
                ranks = (list(call.get("global_ranks_in_group") or [])
                         or list(range(call["group_size"])))
                _register(group, names[group], call.get("backend", "unknown"),
                          ranks)
        except Exception as e:  # never fail the program's group creation
            _warn("meridian: a process group is not registered: %r" % e)
        return group
    return made


def _group_destroyer(destroy, c10d):
    """destroy_process_group, the groups it destroys unregistered first (a
    later group may be given the same object address)."""
    @functools.wraps(destroy)
    def destroyed(group=None):
        try:
            world = getattr(c10d, "GroupMember").WORLD
            gone = (list(_registered) if group is None or group is world
                    else [group])
            for g in gone:
                if g in _registered:
                    _registered.discard(g)
                    _extension.unregister_group(g)
        except Exception as e:
            _warn("meridian: a process group is not unregistered: %r" % e)
        return destroy(group)
    return destroyed


# The operations torch 1.13 calls on the process group directly, not
# through the dispatcher's c10d ops: (function, operation, input argument).
# _all_gather_base and _reduce_scatter_base call the first two.
_DIRECT = (("all_gather_into_tensor", "allgather", "input_tensor"),
           ("reduce_scatter_tensor", "reduce_scatter", "input"),
           ("all_to_all_single", "alltoall", "input"))


def _direct(op, argument):
    """A wrapper of c10d's `function` that begins operation `op` in the
    extension (its process group and its tensor `argument`) around it."""
    def wrap(function, c10d):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def recorded(*args, **kwargs):
            token = 0
            extension = _extension
            extension.python_call_begin()
            try:
                call = signature.bind(*args, **kwargs).arguments
                group = call.get("group")
                if group is None:
                    group = c10d._get_default_group()
                if not c10d._rank_not_in_group(group):
                    token = extension.begin(op, group, call[argument])
            except Exception:  # the call itself says what is wrong
                token = 0
            try:
                return _kept(function(*args, **kwargs), extension)
            finally:
                if token:
                    extension.call_end(token)
                extension.python_call_end()
        return recorded
    return wrap


def _kept(result, extension):
    """`result`, a call's; if it is a work (an asynchronous operation's),
    the record of the operation the call began is kept for its wait."""
    if _work_type is not None and isinstance(result, _work_type):
        record = extension.last_begun()
        if record is not None:
            try:
                _begun[result] = record
            except TypeError:  # a work that takes no weak reference
                pass
    return result


def _work_wait(wait, c10d):
    """Work.wait: the operation its work belongs to in flight while it
    waits (C10dRecorder::WaitBegin), where the call that made the work was
    recorded."""
    @functools.wraps(wait)
    def waiting(work, *args, **kwargs):
        try:
            record = _begun.pop(work, None)
        except TypeError:
            record = None
        if record is None:
            return wait(work, *args, **kwargs)
        extension = _extension
        extension.wait_begin(record)
        try:
            return wait(work, *args, **kwargs)
        finally:
            extension.python_call_end()
    return waiting


# The functions that wait for their operations when not async_op: while one
# runs, the operation it began stays its thread's call in flight, so that a
# rank blocked in its wait shows in it (docs/health.md). With async_op=True
# (and isend, irecv, which never wait) they return a work instead: its
# operation is in flight again while Work.wait waits for it.
_WAITING = ("all_reduce", "broadcast", "reduce", "all_gather", "gather",
            "scatter", "reduce_scatter", "all_to_all", "barrier", "send",
            "recv", "all_gather_object", "gather_object",
            "broadcast_object_list", "scatter_object_list", "isend", "irecv")


def _waiting(function, c10d):
    """A wrapper of c10d's `function` that keeps the operation it begins in
    flight until it returns."""
    @functools.wraps(function)
    def waited(*args, **kwargs):
        extension = _extension
        extension.python_call_begin()
        try:
            return _kept(function(*args, **kwargs), extension)
        finally:
            extension.python_call_end()
    return waited


def capture_collectives():
    """Records torch.distributed's operations from now on (see above).
    Returns a Hook; remove() stops it. An inactive Hook and one warning
    where it cannot: torch not importable, the extension missing or not
    loadable, this process not traced."""
    # Imported before the lock: an import may run the import hook, which
    # takes it (on this thread or another).
    if hooks.import_torch() is None:
        return _refuse("torch is not importable")
    try:
        c10d = importlib.import_module(_C10D)
    except Exception as e:
        return _refuse("torch.distributed is not importable: %r" % e)
    with _lock:
        if _capture.active:
            return _capture
        try:
            return _start(c10d)
        except Exception as e:  # never stop the program for the tracer
            return _refuse(repr(e))


def _refuse(why):
    _warn("meridian: torch.distributed operations are not recorded: " + why,
          stacklevel=4)
    return hooks.Hook()


def _start(c10d):
    """Starts the extension and hooks group creation and destruction in
    `c10d` (and torch.distributed's copy of destroy_process_group where that
    module is already whole). Under _lock."""
    global _capture, _extension
    if not enabled():
        return _refuse("this process is not traced (run it under "
                       "`meridian run`)")
    _extension, why = _load_extension()
    if why is not None:
        return _refuse(why)
    error, skipped = _extension.start(_operator_probability())
    if error:
        return _refuse(error)
    if skipped:
        _warn("meridian: this torch's %s differ from what Meridian reads: "
              "not recorded" % skipped, stacklevel=4)
    patched = []

    def patch(module, name, wrap):
        original = getattr(module, name, None)
        if callable(original) and not getattr(original, "_meridian", False):
            wrapped = wrap(original, c10d)
            wrapped._meridian = True  # not wrapped twice
            # What undo puts back: the attribute as stored (a class's method
            # as its descriptor; getattr gives pybind11's bare function).
            stored = inspect.getattr_static(module, name)
            setattr(module, name, wrapped)
            patched.append((module, name, stored))

    patch(c10d, "_new_process_group_helper", _group_helper)
    global _work_type
    work = getattr(c10d, "Work", None)
    if isinstance(work, type) and hasattr(_extension, "last_begun"):
        _work_type = work
        patch(work, "wait", _work_wait)
    # torch.distributed copies these from c10d once c10d is imported (`from
    # .distributed_c10d import *`): where it has not yet, patching c10d is
    # enough.
    wrappers = [("destroy_process_group", _group_destroyer)]
    wrappers += [(name, _direct(op, argument)) for name, op, argument in _DIRECT]
    wrappers += [(name, _waiting) for name in _WAITING]
    distributed = sys.modules.get("torch.distributed")
    for name, wrap in wrappers:
        patch(c10d, name, wrap)
        if distributed is not None and hasattr(distributed, name):
            patch(distributed, name, wrap)
    _register_groups(c10d)
    extension = _extension
    # At exit: the operations no work claimed are recorded (C10dRecorder's
    # Flush), and torch's threads stop calling in.
    atexit.register(extension.stop)

    def undo():
        atexit.unregister(extension.stop)
        extension.stop()
        global _work_type
        _work_type = None
        for module, name, original in patched:
            setattr(module, name, original)

    _capture = hooks.Hook(undo)
    return _capture


def counters():
    """The extension's counts (recorded, enqueue_only, unregistered,
    untracked), {} before it started."""
    return dict(_extension.counters()) if _extension is not None else {}


class _AfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Starts the capture right after torch.distributed.distributed_c10d is
    executed, whoever imports it (`import torch` does)."""

    def find_spec(self, name, path, target=None):
        if name != _C10D:
            return None
        # The spec the other finders give, with this loader around theirs.
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None:
            return spec
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        # The module's loader is its finder's again (get_source, resources).
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        self._loader.exec_module(module)
        try:
            with _lock:
                if not _capture.active:
                    _start(module)
        except Exception as e:  # never break the program's import of torch
            _warn("meridian: torch.distributed operations are not recorded: "
                  "%r" % e)


def start_automatically():
    """What `import meridian` does (see the top): in a traced process, now
    if torch.distributed is imported, else right after it is. Never raises:
    a tracer must not stop the program it traces."""
    try:
        if (os.environ.get("MERIDIAN_TORCH_COLLECTIVES", "1") == "0"
                or not enabled()):
            return
        c10d = sys.modules.get(_C10D)
        if c10d is not None:
            with _lock:
                if not _capture.active:
                    _start(c10d)
        elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
            sys.meta_path.insert(0, _AfterImport())
    except Exception as e:
        _warn("meridian: torch.distributed operations are not recorded: %r"
              % e)
