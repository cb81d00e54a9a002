"""The package's build beside pyproject.toml: pure Python, and with the
torch.distributed extension (meridian._torch_capture) where it can be built.

The pure wheel (build_wheel.sh) has no csrc/ and builds nothing. The source
archive, meridian-VERSION.tar.gz beside it, carries the extension's C++
under csrc/ (capture/torch/extension_build.py lists it); installed with

    pip install --no-binary meridian --no-build-isolation --no-cache-dir \\
        --no-index --find-links PREFIX/lib/meridian/python meridian

it builds the extension with the torch of the Python pip installs into
(torch's own cpp_extension). Where that cannot be (no torch in the build's
Python, no C++ compiler, no Python headers, a compile error) the package is
installed without it, and meridian/_torch_capture.txt says why: the warning
`import meridian` gives in a torch.distributed job quotes it.
MERIDIAN_TORCH_BUILD=0 installs it without the extension.
"""

import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(HERE, "csrc")
NOTE = os.path.join("meridian", "_torch_capture.txt")


def _plan():
    """(extension_build module or None, why it is not built or None)."""
    if not os.path.isdir(CSRC):
        return None, None  # the pure wheel: nothing to say
    if os.environ.get("MERIDIAN_TORCH_BUILD") == "0":
        return None, "MERIDIAN_TORCH_BUILD=0 when it was installed"
    sys.path.insert(0, os.path.join(CSRC, "capture", "torch"))
    import extension_build

    why = extension_build.why_not()
    if why is not None and "torch is not importable" in why:
        why += (" (pip builds in an isolated environment without torch "
                "unless given --no-build-isolation)")
    return (extension_build if why is None else None), why


def _write_note(build_lib, why):
    path = os.path.join(build_lib, NOTE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("not built when this package was installed: %s\n" % why)
    sys.stderr.write("meridian: torch.distributed capture %s\n" % why)


_builder, _why = _plan()


class BuildPy(build_py):
    def run(self):
        super().run()
        if _why is not None:
            _write_note(self.build_lib, _why)


kwargs = {"cmdclass": {"build_py": BuildPy}}
if _builder is not None:
    torch_build_ext = _builder.build_ext_class()

    class BuildExt(torch_build_ext):
        """torch's build_ext; a failed compile leaves the package pure, with
        the reason in its note, rather than failing the install."""

        def run(self):
            try:
                super().run()
            except Exception as e:  # CompileError, a torch header mismatch
                _write_note(self.build_lib, "its compile failed: %s" % e)

    # setuptools takes only relative source paths; pip runs this from HERE.
    kwargs["ext_modules"] = [_builder.extension("csrc")]
    kwargs["cmdclass"]["build_ext"] = BuildExt

setup(**kwargs)
