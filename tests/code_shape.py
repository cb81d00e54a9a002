#!/usr/bin/env python3
"""The shape of the production code, checked (issue 49; docs/architecture.md).

Production code: the C++ under the source folders, not tests (*_test.cc),
benchmarks (*_bench.cc), fuzz targets (*_fuzz.cc), testing/, tests/, bench/,
fuzz/, examples/ or third_party/. Three rules:

  - a file holds at most 800 lines;
  - a function body (from the line of its opening brace's declaration to
    its closing brace) holds at most 100 lines;
  - a header's include guard names its path: store/store.h has
    MERIDIAN_STORE_STORE_H_; an installed header, under include/meridian/,
    by its path below that (meridian/probe.h: MERIDIAN_PROBE_H_).

What broke a rule before the rule came is listed in tests/code_shape_allowed.txt
with its size then: it may shrink, not grow, and its line is taken out once
it fits (a line left for something that fits is an error too), so that the
list only shortens.

Functions are found from the text, not a compiler: after comments, strings
and character literals are blanked, a brace opens a function body when the
statement before it has a parameter list and is not a control statement,
a lambda or an initializer, at namespace or class level. This holds for
clang-formatted code (tests/run.sh checks the format first).

Prints each finding as "PATH: ..." and exits 1 if there is any.
"""
import bisect
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 100
EXCLUDED_TOP = ("third_party/", "tests/", "testing/", "bench/", "fuzz/",
                "examples/")
EXCLUDED_SUFFIX = re.compile(r"_(test|bench|fuzz)\.(cc|h)$")
CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|try)\b")
NOT_FUNCTION = re.compile(r"^(namespace|class|struct|union|enum|extern)\b|=$")


def production_files(root):
    listed = subprocess.run(["git", "ls-files", "--cached", "--others",
                             "--exclude-standard", "*.cc", "*.h"], cwd=root,
                            check=True, capture_output=True,
                            text=True).stdout.split()
    return sorted(p for p in listed if not p.startswith(EXCLUDED_TOP) and
                  not EXCLUDED_SUFFIX.search(p))


def blank(text):
    """Comments, strings and character literals as spaces, lines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or
                                           not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(c)  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_directives(code):
    """Preprocessor directives (with their continued lines) as spaces."""
    lines = code.split("\n")
    continued = False
    for i, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[i] = " " * len(line)
    return "\n".join(lines)


def functions(text):
    """(name, first line, lines) of each function body not inside another."""
    code = without_directives(blank(text))
    found = []
    stack = []  # per open brace: (is a function, its statement's first line)
    statement_start = 0  # offset where the current statement began
    line_at = [0]  # line_at[k]: offset of line k+1's start
    for k, ch in enumerate(code):
        if ch == "\n":
            line_at.append(k + 1)
    def line_of(offset):
        return bisect.bisect_right(line_at, offset)

    in_function = 0
    for k, ch in enumerate(code):
        if ch == "{":
            statement = " ".join(code[statement_start:k].split())
            is_function = False
            # A body's brace follows a space; a braced initializer (b_{a},
            # T{...}) follows its name.
            if in_function == 0 and code[k - 1:k].isspace() and (
                    "(" in statement) and not CONTROL.match(
                    statement) and not NOT_FUNCTION.search(statement):
                is_function = True
            first = line_of(statement_start + len(code[statement_start:k]) -
                            len(code[statement_start:k].lstrip()))
            initializer = not code[k - 1:k].isspace()
            stack.append((is_function, first, statement,
                          statement_start if initializer else None))
            if is_function:
                in_function += 1
            if not initializer:
                statement_start = k + 1
        elif ch == "}":
            resume = None
            if stack:
                is_function, first, statement, resume = stack.pop()
                if is_function:
                    in_function -= 1
                    name = statement.split("(")[0].split()[-1:] or ["?"]
                    found.append((name[0], first, line_of(k) - first + 1))
            # After a braced initializer the statement goes on.
            statement_start = k + 1 if resume is None else resume
        elif ch == ";":
            statement_start = k + 1
        elif ch == "\n" and code[line_at[line_of(k) - 1]:k].rstrip().endswith(
                ")") and code[k + 1:k + 2] not in ("", " ", "\n", "{", ":"):
            # A line ending in ")" followed by one that starts in column 0:
            # a macro's use standing as a statement of its own.
            statement_start = k + 1
    return found


def guard_of(path):
    below = path.split("/include/meridian/", 1)[-1]
    return "MERIDIAN_" + re.sub(r"[^A-Za-z0-9]", "_", below).upper() + "_"


SELF_TEST = r"""
#define WRAP(x) \
  int x() { return 1; }
WRAP(a)
WRAP(b)
namespace n {
// f( in a comment {
struct S {
  int Inline() const { return 2; }
};
absl::Status Foo::Bar(int a,
                      int b) const {
  auto f = [](int x) { return x; };
  if (a) {
    const char* s = "{";
  }
  return 'a' + 1'000;
}
Foo::Foo(int a)
    : a_(a), b_{a} {
  for (;;) {
  }
}
constexpr int kTable[] = {1, 2};
extern "C" {
void C(void) {}
}
}  // namespace n
"""


def self_test():
    got = functions(SELF_TEST)
    want = [("Inline", 9, 1), ("Foo::Bar", 11, 8), ("Foo::Foo", 19, 5),
            ("C", 26, 1)]
    if got != want:
        print(f"code_shape: self test: functions {got}, want {want}")
        return 1
    checks = {"store/store.h": "MERIDIAN_STORE_STORE_H_",
              "capture/probe/include/meridian/probe.h": "MERIDIAN_PROBE_H_"}
    for path, want in checks.items():
        if guard_of(path) != want:
            print(f"code_shape: self test: guard of {path} {guard_of(path)}")
            return 1
    return 0


def main():
    if self_test():
        return 1
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    allowed = {}
    allowed_path = os.path.join(root, "tests", "code_shape_allowed.txt")
    with open(allowed_path) as f:
        for raw in f:
            entry = raw.split("#", 1)[0].strip()
            if entry:
                key, size = entry.rsplit(" ", 1)
                allowed[key] = int(size)
    findings = []
    used = set()

    def over(key, size, limit, what):
        if size <= limit:
            return
        if key in allowed:
            used.add(key)
            if size > allowed[key]:
                findings.append(f"{key}: {what} grew to {size} lines, past "
                                f"the {allowed[key]} it was allowed "
                                f"(the limit is {limit})")
            return
        findings.append(f"{key}: {what} of {size} lines, over {limit}")

    for path in production_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        over(path, text.count("\n"), MAX_FILE_LINES, "a file")
        for name, first, lines in functions(text):
            over(f"{path}:{name}", lines, MAX_FUNCTION_LINES,
                 f"function {name} (line {first})")
        if path.endswith(".h"):
            m = re.search(r"^#ifndef (\S+)\n#define \1$", text, re.M)
            want = guard_of(path)
            if not m:
                findings.append(f"{path}: no include guard (want {want})")
            elif m.group(1) != want:
                findings.append(f"{path}: include guard {m.group(1)}, "
                                f"want {want}")
    for key in sorted(set(allowed) - used):
        findings.append(f"{key}: fits now; take its line out of "
                        "tests/code_shape_allowed.txt")
    for finding in findings:
        print(finding)
    if findings:
        print(f"code_shape: {len(findings)} finding(s)", file=sys.stderr)
        return 1
    print("code_shape: every production file and function within bounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
