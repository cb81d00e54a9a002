"""cuda_configure: the CUDA toolkit, if this machine has one, as @local_cuda.

Looks in $CUDA_HOME, else /usr/local/cuda. Found when it has CUPTI
(include/cupti.h and libcupti.so) and the NVTX 3 headers. @local_cuda then
offers:
  :headers   the toolkit's C headers (CUDA, CUPTI, NVTX 3)
  :cupti     libcupti.so, linked with an rpath to the toolkit's library dir
  :nvcc      (in defs.bzl) the path of nvcc, for scripts
and defs.bzl with CUDA_FOUND and CUDA_COMPATIBLE. Targets that need the
toolkit set `target_compatible_with = CUDA_COMPATIBLE`: without a toolkit
they are incompatible, and `bazel build //...` / `bazel test //...` skip
them (saying so) while everything else builds.
"""

_CUPTI_DIRS = ["lib64", "lib", "extras/CUPTI/lib64", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"]

def _find_cupti(ctx, root):
    for d in _CUPTI_DIRS:
        candidate = ctx.path(root + "/" + d + "/libcupti.so")
        if candidate.exists:
            return root + "/" + d
    return None

def _cuda_configure_impl(ctx):
    root = ctx.os.environ.get("CUDA_HOME", "") or "/usr/local/cuda"
    include = ctx.path(root + "/include")
    cupti_dir = None
    if ctx.path(root + "/include/cupti.h").exists and ctx.path(root + "/include/nvtx3/nvToolsExt.h").exists:
        cupti_dir = _find_cupti(ctx, root)
    found = cupti_dir != None

    # What no platform provides: a target requiring it is incompatible.
    build = [
        'package(default_visibility = ["//visibility:public"])',
        'constraint_setting(name = "toolkit")',
        'constraint_value(name = "missing", constraint_setting = ":toolkit")',
    ]
    if found:
        ctx.symlink(include, "include")
        ctx.symlink(cupti_dir + "/libcupti.so", "lib/libcupti.so")
        build += [
            "cc_library(",
            '    name = "headers",',
            '    hdrs = glob(["include/*.h", "include/nvtx3/**", "include/crt/**"]),',
            '    includes = ["include"],',
            ")",
            "cc_library(",
            '    name = "cupti",',
            '    srcs = ["lib/libcupti.so"],',
            '    linkopts = ["-Wl,-rpath,%s"],' % cupti_dir,
            '    deps = [":headers"],',
            ")",
        ]
        print_message = "CUDA toolkit at %s: GPU capture (CUPTI, NVTX) is built" % root
    else:
        build += [
            'cc_library(name = "headers")',
            'cc_library(name = "cupti")',
        ]
        print_message = ("No CUDA toolkit with CUPTI and NVTX 3 at %s (set CUDA_HOME): " % root +
                         "the CUPTI and NVTX capture libraries and their tests are skipped")
    ctx.file("BUILD.bazel", "\n".join(build) + "\n")
    ctx.file("defs.bzl", "\n".join([
        "CUDA_FOUND = %s" % found,
        "CUDA_ROOT = %r" % root,
        "CUDA_MESSAGE = %r" % print_message,
        "CUDA_COMPATIBLE = %s" % ("[]" if found else '["@local_cuda//:missing"]'),
    ]) + "\n")

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_HOME"],
    local = True,
)
