"""build_extension.py OUTDIR: builds Meridian's torch.distributed capture,
the module meridian._torch_capture, into OUTDIR/meridian/ with torch's own
cpp_extension, against the torch this Python imports (its headers, its
compiler flags and pybind11 ABI), so that the module loads into that torch
(what it compiles: extension_build.py).

    /usr/bin/python3 capture/torch/build_extension.py PREFIX/lib/meridian/python

deploy/install.sh runs it for Debian's torch (python3-torch, libtorch-dev);
the tests run it into a temporary directory. It prints the module's path.
Exit status 2 with the reason on stderr when it cannot build: torch not
importable, no C++ compiler, no Python headers (Debian: python3-dev).
"""

import os
import sys
import tempfile


def fail(why):
    print("build_extension.py: " + why, file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 2:
        print("usage: build_extension.py OUTDIR", file=sys.stderr)
        sys.exit(2)
    out_dir = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))  # the tree's top
    sys.path.insert(0, here)
    import extension_build

    why = extension_build.why_not()
    if why is not None:
        fail(why)
    from setuptools import setup

    with tempfile.TemporaryDirectory(prefix="meridian-torch-") as temp:
        # setuptools prints its progress on stdout: keep stdout for the path.
        stdout = sys.stdout
        sys.stdout = sys.stderr
        try:
            setup(name="meridian-torch-capture",
                  ext_modules=[extension_build.extension(root)],
                  cmdclass={"build_ext": extension_build.build_ext_class()},
                  script_args=["-q", "build_ext", "--build-lib", out_dir,
                               "--build-temp", temp])
        except SystemExit as e:
            sys.stdout = stdout
            fail("the build failed (%s)" % e)
        finally:
            sys.stdout = stdout
    built = [f for f in os.listdir(os.path.join(out_dir, "meridian"))
             if f.startswith("_torch_capture") and f.endswith(".so")]
    if len(built) != 1:
        fail("expected one _torch_capture*.so in %s/meridian, found %s"
             % (out_dir, built))
    print(os.path.join(out_dir, "meridian", built[0]))


if __name__ == "__main__":
    main()
