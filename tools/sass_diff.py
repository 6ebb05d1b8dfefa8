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
import re, subprocess, sys

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
                      + (f"\n    {a.get(f)} -> {b.get(f)}" if what == "-res-usage" else ""))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
