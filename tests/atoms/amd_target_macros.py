#!/usr/bin/python3
"""Checks that the AMD feature macros (atoms/include/flashprobe/atoms/amd_targets.cuh) agree with the
host target lists (targets.h): compiles amd_target_macros.cu with clang-19 for every gfx target named
in targets.h and for a few outside every list. A target clang-19 does not know is reported as not
checked (by name), never as passed; the run fails if fewer than half of the targets were checked.
Usage: amd_target_macros.py CLANG SOURCE_DIR. Exit 0 pass, 1 fail."""
import re, subprocess, sys

clang, root = sys.argv[1], sys.argv[2]
listed = sorted(set(re.findall(r'"(gfx\w+)"sv', open(f"{root}/atoms/include/flashprobe/atoms/targets.h").read())))
outside = ["gfx906", "gfx1030", "gfx1036", "gfx1010"]
checked, unknown, failed = [], [], []
for t in listed + outside:
    p = subprocess.run([clang, "-x", "hip", "--cuda-device-only", f"--offload-arch={t}", "-nogpulib", "-std=c++20",
                        "-fsyntax-only", f'-DFP_CHECK_TARGET="{t}"', f"-I{root}/atoms/include",
                        f"{root}/tests/atoms/amd_target_macros.cu"], capture_output=True, text=True)
    if "invalid target ID" in p.stderr or "unknown target" in p.stderr.lower():
        unknown.append(t)
    elif p.returncode != 0:
        failed.append(t)
        print(f"FAIL {t}:\n{p.stderr}")
    else:
        checked.append(t)
print(f"amd_target_macros: {len(checked)} targets checked ({' '.join(checked)}), {len(failed)} failed, "
      f"{len(unknown)} not checked: clang-19 does not know {' '.join(unknown) or 'none'}")
sys.exit(1 if failed or len(checked) * 2 < len(listed) + len(outside) else 0)
