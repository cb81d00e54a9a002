"""The torch extension meridian._torch_capture, defined once for its two
builds: capture/torch/build_extension.py (deploy/install.sh, the tests) and
the Python package's setup.py (`pip install` of the source archive that
capture/probe/python/build_wheel.sh writes, with this file and FILES under
its csrc/).

Run as `python3 extension_build.py --files`, it lists FILES, one a line,
relative to the tree's top, for build_wheel.sh to copy; that needs no torch.
"""

import os
import shutil
import sys
import sysconfig

# What the extension compiles and includes, relative to the tree's top.
SOURCES = [
    "capture/probe/capture_sink.cc",
    "capture/torch/c10d_recorder.cc",
    "capture/torch/torch_callbacks.cc",
    "capture/torch/torch_module.cc",
]
FILES = SOURCES + [
    "abi/probe_record.h",
    "capture/probe/capture_sink.h",
    "capture/probe/handle_table.h",
    "capture/probe/include/meridian/probe.h",
    "capture/torch/c10d_recorder.h",
    "capture/torch/torch_callbacks.h",
    "capture/torch/extension_build.py",
]


def why_not():
    """Why the extension cannot be built by this Python, or None: torch not
    importable here, no C++ compiler, no Python headers."""
    try:
        import torch  # noqa: F401
        from torch.utils import cpp_extension  # noqa: F401
    except Exception as e:  # any broken torch install
        return "torch is not importable by %s: %s" % (sys.executable, e)
    compiler = os.environ.get("CXX", "c++")
    if shutil.which(compiler) is None:
        return "no C++ compiler (%s) on PATH" % compiler
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        return "no Python.h in %s (Debian: python3-dev)" % include
    return None


def extension(root):
    """The CppExtension of the sources under `root` (the tree's top, or a
    source archive's csrc/). Call only when why_not() is None."""
    from torch.utils.cpp_extension import CppExtension
    return CppExtension(
        "meridian._torch_capture",
        [os.path.join(root, p) for p in SOURCES],
        include_dirs=[root, os.path.join(root, "capture/probe/include")],
        extra_compile_args=["-O2", "-std=c++17", "-Wall",
                            # torch 1.13's own headers use std::iterator
                            "-Wno-deprecated-declarations"])


def build_ext_class():
    """torch's build_ext, with its flags and pybind11 ABI (no ninja: Debian
    has it only as a separate package)."""
    from torch.utils.cpp_extension import BuildExtension
    return BuildExtension.with_options(use_ninja=False)


if __name__ == "__main__":
    if sys.argv[1:] != ["--files"]:
        print("usage: extension_build.py --files", file=sys.stderr)
        sys.exit(2)
    print("\n".join(FILES))
