"""Finding libmeridian_probe.so and binding its C API (meridian/probe.h).

The library is looked for in this order; the first that loads is used:

  1. Already in this process: `meridian run` preloads it (LD_PRELOAD), or
     the program loaded it. Asked with RTLD_NOLOAD, so nothing is loaded by
     this step, and a second copy of the probe is never loaded beside the
     one that records.
  2. $MERIDIAN_PROBE_LIB, a path (a warning if it is set and cannot be
     loaded).
  3. Beside the `meridian` program on PATH (symbolic links resolved), where
     `meridian run` itself looks: BIN/../lib/libmeridian_probe.so (a
     deploy/install.sh prefix), then BIN/../capture/probe/libmeridian_probe.so
     (a bazel-bin tree).
  4. Nowhere: every call of the package does nothing.

A library that loads but was not started for a node agent (no
MERIDIAN_AGENT_SOCKET: not under `meridian run`) records nothing either; the
probe's own calls return at once then.
"""

import ctypes
import os
import shutil
import warnings

LIBRARY_NAME = "libmeridian_probe.so"

# Relative to the directory of the `meridian` program, as `meridian run`
# looks for the probe (cli/run_command.cc).
_BESIDE_MERIDIAN = ("../lib/" + LIBRARY_NAME,
                    "../capture/probe/" + LIBRARY_NAME)


def _bind(lib):
    """Declares the C signatures; AttributeError if a symbol is missing."""
    lib.meridian_enabled.argtypes = []
    lib.meridian_enabled.restype = ctypes.c_int
    lib.meridian_now_ns.argtypes = []
    lib.meridian_now_ns.restype = ctypes.c_uint64
    lib.meridian_step_begin.argtypes = [ctypes.c_int64]
    lib.meridian_step_begin.restype = None
    lib.meridian_step_end.argtypes = []
    lib.meridian_step_end.restype = None
    lib.meridian_phase_begin.argtypes = [ctypes.c_char_p]
    lib.meridian_phase_begin.restype = None
    lib.meridian_phase_end.argtypes = []
    lib.meridian_phase_end.restype = None
    lib.meridian_queue_phase.argtypes = [
        ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64,
        ctypes.c_int64, ctypes.c_int32]
    lib.meridian_queue_phase.restype = None
    lib.meridian_instant.argtypes = [ctypes.c_char_p]
    lib.meridian_instant.restype = None
    lib.meridian_counter.argtypes = [ctypes.c_char_p, ctypes.c_double]
    lib.meridian_counter.restype = None
    return lib


def _open(name, mode=ctypes.DEFAULT_MODE):
    try:
        return _bind(ctypes.CDLL(name, mode=mode))
    except (OSError, AttributeError):
        return None


def _beside_meridian():
    program = shutil.which("meridian")
    if program is None:
        return []
    bin_dir = os.path.dirname(os.path.realpath(program))
    return [os.path.normpath(os.path.join(bin_dir, relative))
            for relative in _BESIDE_MERIDIAN]


def load():
    """The probe library, bound, or None if none was found (see above)."""
    # RTLD_NOLOAD matches a loaded library by its soname, whatever path
    # LD_PRELOAD gave.
    lib = _open(LIBRARY_NAME, os.RTLD_NOLOAD | os.RTLD_NOW)
    if lib is not None:
        return lib
    path = os.environ.get("MERIDIAN_PROBE_LIB")
    if path:
        lib = _open(path)
        if lib is not None:
            return lib
        warnings.warn("meridian: MERIDIAN_PROBE_LIB=%s could not be loaded; "
                      "looking beside the meridian program instead" % path,
                      RuntimeWarning)
    for candidate in _beside_meridian():
        if os.path.exists(candidate):
            lib = _open(candidate)
            if lib is not None:
                return lib
    return None


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p),
                ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def path_of(lib):
    """The file `lib` was loaded from (dladdr), or the name it was opened by
    where the C library cannot say."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        info = _DlInfo()
        address = ctypes.cast(lib.meridian_enabled, ctypes.c_void_p)
        if dladdr(address, ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
    except (OSError, AttributeError):
        pass
    return lib._name
