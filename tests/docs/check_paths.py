#!/usr/bin/python3
"""Every path a comment, README or script of the repository names must exist: a stale path (a test
file that was renamed, a header that moved) misleads the next reader. Scans the tracked text files
(reports/data excepted: records quote the tree of their own date) for
  - repository paths: a top-level folder of the project followed by a path (kernels/src/mma/...);
  - relative paths in Markdown files (../../atoms/...), resolved from the file's folder;
  - include paths (flashprobe/atoms/layouts.h), looked up under every */include/ folder;
  - the design documents outside the repository (../shared, DESIGN.md, STYLE.md): the specification
    is docs/, and nothing may point elsewhere.
A path with a wildcard or placeholder (*, <name>, NAME, $VAR, a Python f-string field {x.y}) names a
family, not a file, and is skipped; a brace list {a,b} is expanded. A record run that left the tree
(reports/data/<device>/<run>) counts when reports/data/INDEX.md lists it (its commit holds it); a
module's header may be named short (oracle/check.h for oracle/include/flashprobe/oracle/check.h);
a build-tree path (kernels/CMakeFiles/...) or a test binary (tests/test_mutation) counts when its
CMake target exists. Usage: check_paths.py SOURCE_DIR. Exit 0 pass, 1 fail."""
import itertools, os, re, subprocess, sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
TOP = ("atoms", "bench", "cli", "cmake", "core", "docs", "kernels", "oracle", "plugin", "probes", "proptests",
       "reports", "scripts", "tests", "tools", ".ci")
EXT = (".md", ".h", ".cuh", ".cu", ".cpp", ".py", ".cmake", ".txt", ".json", ".in", "")
REPO = re.compile(r"(?<![\w./-])((?:\.\./)*(?:" + "|".join(re.escape(t) for t in TOP) + r")/[\w.{},/-]*[\w}])")
INCLUDE = re.compile(r"(?<![\w./-])(flashprobe/[\w/]+\.(?:h|cuh))")


def files():
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout
        names = out.split()
    except (OSError, subprocess.CalledProcessError):
        names = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]
    for n in names:
        if n.startswith(("reports/data/", "build/")) or not os.path.isfile(os.path.join(root, n)):
            continue
        base = os.path.basename(n)
        if base == "CMakeLists.txt" or base.endswith(EXT[:-1]) or (os.sep not in n and "." not in base) or \
                n.startswith("scripts/"):
            yield n


def expand(p):
    parts = re.split(r"\{([^{}]*)\}", p)
    if len(parts) == 1:
        return [p]
    fixed, choices = parts[0::2], [c.split(",") for c in parts[1::2]]
    return ["".join(itertools.chain.from_iterable(zip(fixed, combo + ("",)))) for combo in itertools.product(*choices)]


include_roots = sorted({os.path.join(d) for d, _, _ in os.walk(root) if d.endswith(os.sep + "include")
                        and "/build/" not in d + "/" and "/.git/" not in d})
# Test executables named by their build-tree path (tests/test_mutation): the CMake target must exist.
test_targets = set()
for d, _, fs in os.walk(os.path.join(root, "tests")):
    if "CMakeLists.txt" in fs:
        test_targets |= set(re.findall(r"\bNAME\s+(test_\w+)", open(os.path.join(d, "CMakeLists.txt")).read()))
index = os.path.join(root, "reports", "data", "INDEX.md")
indexed_runs = set(re.findall(r"^\| ([^|\s]+/[^|\s]+) \|", open(index).read(), re.M)) if os.path.exists(index) else set()
missing = []
checked = 0
for n in files():
    try:
        text = open(os.path.join(root, n), encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    here = os.path.dirname(os.path.join(root, n))
    for lineno, line in enumerate(text.splitlines(), 1):
        if re.match(r"\s*#\s*include\s*\"", line):
            continue  # quoted includes are resolved (and checked) by the compiler, relative to their file
        for m in REPO.finditer(line):
            tok = m.group(1).rstrip(".,")
            after = line[m.end(1) - (len(m.group(1)) - len(tok)):][:4]
            if any(c in tok for c in "*<>$") or re.search(r"/[A-Z_]{3,}(/|$)", tok) or tok.endswith("/") or \
                    re.match(r"[\w.-]*[*$<{]", after) or after.startswith("/...") or re.search(r"\{\w+\.\w+\}", tok):
                continue
            for p in expand(tok):
                checked += 1
                candidates = [os.path.join(here, p), os.path.join(root, re.sub(r"^(?:\.\.?/)+", "", p))]  # keeps .ci/
                if any(os.path.exists(os.path.normpath(c)) for c in candidates):
                    continue
                name = os.path.basename(p)
                if p.startswith("tests/") and name.startswith("test_") and "." not in name and name in test_targets:
                    continue  # a test binary of the build tree, named by its CMake target
                run = re.match(r"reports/data/([^/]+/[^/]+)", p)
                if run and run.group(1) in indexed_runs:
                    continue  # a run that left the tree; INDEX.md names the commit that holds it
                mod = p.split("/")[0]
                if os.path.exists(os.path.join(root, mod, "include", "flashprobe", p)):
                    continue  # oracle/check.h: the module's own header, named short
                built = re.match(r"(\w+)/CMakeFiles/(\w+)\.dir/(.+)\.o$", p)
                if built and os.path.exists(os.path.join(root, built.group(1), built.group(3))):
                    continue  # an object of the build tree whose source exists
                missing.append(f"{n}:{lineno}: {p}")
        if re.search(r"\.\./shared\b|\bDESIGN\.md|\bSTYLE\.md", line) and n != "tests/docs/check_paths.py":
            checked += 1
            missing.append(f"{n}:{lineno}: names the design documents outside the repository; the spec is docs/")
        for m in INCLUDE.finditer(line):
            for p in expand(m.group(1)):
                checked += 1
                if not any(os.path.exists(os.path.join(r, p)) for r in include_roots):
                    missing.append(f"{n}:{lineno}: {p} (under no include/ folder)")
for x in missing:
    print("missing:", x)
print(f"check_paths: {checked} path mentions checked, {len(missing)} missing")
sys.exit(1 if missing or checked == 0 else 0)
