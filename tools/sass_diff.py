#!/usr/bin/python3
"""Compares the machine code of the shipped kernel objects of two CUDA build trees, function by
function: the SASS (addresses and encodings stripped) and the resource usage (registers, stack,
spills, shared memory) that cuobjdump reports. A change meant to leave the kernels as fast as they
are must leave both identical, or every difference must be explained.

  tools/sass_diff.py BASE_BUILD NEW_BUILD [OBJECT ...]

OBJECTs are paths relative to the build trees (default: the mma objects at D = 64 and 128 and the
wgmma object). cuobjdump and nvdisasm come with the CUDA toolkit, or from PyPI
(nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm: put their bin/ on PATH). Exit 0 when everything is
identical, 1 when something differs, 2 on bad usage."""
import difflib, re, subprocess, sys

DEFAULT = ["kernels/CMakeFiles/flashprobe_kernels.dir/src/mma/mma_nvidia_d64.cu.o",
           "kernels/CMakeFiles/flashprobe_kernels.dir/src/mma/mma_nvidia_d128.cu.o",
           "kernels/CMakeFiles/flashprobe_kernels_sm90a.dir/src/wgmma/wgmma_launch.cu.o"]


def dump(obj, what):
    out = subprocess.run(["cuobjdump", what, obj], capture_output=True, text=True, check=True).stdout
    funcs, cur, arch = {}, None, ""
    for line in out.splitlines():
        if m := re.match(r"\s*arch = (\S+)", line):
            arch = m.group(1)
        if m := re.match(r"\s*Function\s*:?\s*(\S+?):?$", line.strip()):
            cur = f"{arch} {m.group(1)}"
            funcs[cur] = []
            continue
        if cur is None:
            continue
        line = re.sub(r"/\*[0-9a-f]{4,}\*/|/\* 0x[0-9a-f]+ \*/", "", line).strip()
        if line:
            funcs[cur].append(line)
    return funcs


def where(a, b):
    """Where two functions' SASS differ: instructions compared with code addresses masked;
    the count that differ and the span of instruction indices (of a) that holds them."""
    def mask(ls):  # branch and call targets, and the return address moved into a register before a CALL
        return [re.sub(r"0x[0-9a-f]+", "ADDR", x)
                if re.search(r"\b(BRA|BSSY|CALL|JMP|BRX)\b", x)
                or (re.match(r"MOV R\d+, 0x[0-9a-f]+ ;", x) and i + 1 < len(ls) and "CALL" in ls[i + 1]) else x
                for i, x in enumerate(ls)]
    ops = [o for o in difflib.SequenceMatcher(None, mask(a), mask(b), autojunk=False).get_opcodes() if o[0] != "equal"]
    if not ops:
        return "same instructions, only branch addresses differ"
    n = sum(max(o[2] - o[1], o[4] - o[3]) for o in ops)
    body = [o for o in ops if not all(re.match(r"^\s*NOP\b", x) for x in b[o[3]:o[4]] + a[o[1]:o[2]])]
    lo, hi = (body[0][1], body[-1][2]) if body else (0, 0)
    return f"{n} instruction(s) differ, all but trailing NOP padding within instructions {lo}-{hi} of {len(a)}"


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, new, objs = sys.argv[1], sys.argv[2], sys.argv[3:] or DEFAULT
    same = True
    for o in objs:
        for what in ("-sass", "-res-usage"):
            a, b = dump(f"{base}/{o}", what), dump(f"{new}/{o}", what)
            diff = [f for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
            label = "SASS" if what == "-sass" else "resources"
            print(f"{o.split('/')[-1]}: {label} of {len(a)} function(s): "
                  + ("identical" if not diff else f"{len(diff)} differ"))
            for f in diff:
                same = False
                print(f"  {f[:140]}: {len(a.get(f, []))} vs {len(b.get(f, []))} lines"
                      + (f"\n    {a.get(f)} -> {b.get(f)}" if what == "-res-usage" else
                         f"\n    {where(a.get(f, []), b.get(f, []))}"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
