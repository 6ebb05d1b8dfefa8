#!/usr/bin/env python3
"""Check AMD device code compiled by clang-19 (see cmake/AmdDeviceCode.cmake).

For every target, reads <asm-dir>/<target>/<name>.*.s and
  * asserts each --expect "TARGET:REGEX" (TARGET may be '*'; a REGEX starting with '!' must be absent),
  * extracts per kernel the resource usage from the code-object metadata (.amdgpu_metadata):
    VGPR, AGPR, SGPR counts, spills, LDS (group segment) and scratch (private segment) bytes,
    wave size, and the resulting waves per SIMD from the register file and LDS sizes of the target,
  * writes them as a record (JSON) to --resources-out.
Exit 0 when every expectation holds, 1 otherwise (with the evidence), 2 on bad usage.
"""
import argparse, datetime, glob, json, os, re, subprocess, sys

# Per target: VGPRs per SIMD lane for wave32/wave64 (unified arch+acc file on CDNA), allocation
# granule, maximum waves per SIMD, LDS bytes per workgroup processor/CU, SIMDs sharing that LDS.
# Sources: AMD RDNA3/RDNA4 ISA guides and the CDNA3 ISA guide (register file and LDS sizes), the
# LLVM AMDGPU backend's documented occupancy rules (AMDGPUUsage, "VGPR allocation granularity").
TARGETS = {
    "gfx1100": dict(vgprs={32: 1536, 64: 768}, granule={32: 24, 64: 12}, max_waves=16, lds=131072, simds=4, family="RDNA3"),
    "gfx1201": dict(vgprs={32: 1536, 64: 768}, granule={32: 24, 64: 12}, max_waves=16, lds=131072, simds=4, family="RDNA4"),
    "gfx90a": dict(vgprs={64: 512}, granule={64: 8}, max_waves=8, lds=65536, simds=4, family="CDNA2", unified=True),
    "gfx940": dict(vgprs={64: 512}, granule={64: 8}, max_waves=8, lds=65536, simds=4, family="CDNA3", unified=True),
    "gfx942": dict(vgprs={64: 512}, granule={64: 8}, max_waves=8, lds=65536, simds=4, family="CDNA3", unified=True),
}


def parse_metadata(text):
    """The kernels of the .amdgpu_metadata YAML block, as dicts of scalar fields."""
    m = re.search(r"\.amdgpu_metadata(.*?)\.end_amdgpu_metadata", text, re.S)
    if not m:
        return []
    kernels, cur = [], None
    in_args = False
    for line in m.group(1).splitlines():
        if re.match(r"^  - ", line):  # a new kernel entry in amdhsa.kernels
            cur = {}
            kernels.append(cur)
            in_args = False
            line = "    " + line[4:]
        if cur is None:
            continue
        if re.match(r"^    \.args:", line):
            in_args = True
            continue
        km = re.match(r"^    (\.[\w]+):\s*(.*)$", line)
        if km:
            in_args = False
            key, val = km.group(1)[1:], km.group(2).strip()
            if re.fullmatch(r"-?\d+", val):
                val = int(val)
            cur[key] = val
        elif in_args:
            continue
    return [k for k in kernels if "name" in k]


def waves_per_simd(target, k):
    t = TARGETS.get(target)
    if not t:
        return None
    wave = int(k.get("wavefront_size", 64))
    vg = int(k.get("vgpr_count", 0))
    if t.get("unified"):
        vg = (-(-vg // 4) * 4) + int(k.get("agpr_count", 0))  # arch VGPRs padded to 4, then AGPRs
    g = t["granule"].get(wave, 8)
    alloc = max(g, -(-vg // g) * g)
    by_vgpr = min(t["max_waves"], t["vgprs"].get(wave, 512) // alloc)
    lds = int(k.get("group_segment_fixed_size", 0))
    if lds > 0:
        wg = int(k.get("max_flat_workgroup_size", wave)) or wave
        waves_per_wg = max(1, -(-wg // wave))
        wgs = t["lds"] // lds
        by_lds = wgs * waves_per_wg // t["simds"]
        return max(0, min(by_vgpr, by_lds)), ("lds" if by_lds < by_vgpr else "vgpr")
    return by_vgpr, "vgpr"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", required=True)
    ap.add_argument("--asm-dir", required=True)
    ap.add_argument("--targets", nargs="+", required=True)
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--resources-out")
    a = ap.parse_args()

    failures, records = [], []
    for tgt in a.targets:
        files = sorted(glob.glob(os.path.join(a.asm_dir, tgt, a.name + ".*.s")))
        if not files:
            failures.append(f"{tgt}: no assembly for {a.name} under {a.asm_dir}/{tgt} (was the target built?)")
            continue
        text = "\n".join(open(f).read() for f in files)
        code = "\n".join(l for l in text.splitlines() if l.startswith("\t") and not l.lstrip().startswith("."))
        for e in a.expect:
            if ":" not in e:
                print(f"bad --expect '{e}': use TARGET:REGEX", file=sys.stderr)
                return 2
            et, pat = e.split(":", 1)
            if et not in ("*", tgt):
                continue
            absent = pat.startswith("!")
            rx = re.compile(pat[1:] if absent else pat)
            hits = [l.strip() for l in code.splitlines() if rx.search(l)]
            if absent and hits:
                failures.append(f"{tgt}: '{pat[1:]}' must be absent but appears {len(hits)}x, e.g. '{hits[0]}'")
            elif not absent and not hits:
                failures.append(f"{tgt}: expected an instruction matching '{pat}' in {a.name}, found none")
            else:
                print(f"ok   {tgt:8s} {a.name}: {'no ' if absent else ''}'{pat.lstrip('!')}'" +
                      (f" ({len(hits)}x, e.g. {hits[0]})" if hits else ""))
        for k in parse_metadata(text):
            w = waves_per_simd(tgt, k)
            records.append({
                "target": tgt, "family": TARGETS.get(tgt, {}).get("family", "?"), "unit": a.name,
                "kernel": k.get("name"), "wave_size": k.get("wavefront_size"),
                "vgpr": k.get("vgpr_count"), "agpr": k.get("agpr_count", 0), "sgpr": k.get("sgpr_count"),
                "vgpr_spill": k.get("vgpr_spill_count", 0), "sgpr_spill": k.get("sgpr_spill_count", 0),
                "lds_bytes": k.get("group_segment_fixed_size", 0),
                "scratch_bytes": k.get("private_segment_fixed_size", 0),
                "max_workgroup_size": k.get("max_flat_workgroup_size"),
                "waves_per_simd": w[0] if w else None, "occupancy_limited_by": w[1] if w else None,
            })
    if a.resources_out:
        rec = {"schema": "flashprobe.resources/1", "source": "clang-19 code-object metadata (compiled, not run)",
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "compiler": subprocess.run(["clang-19", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
               if subprocess.run(["which", "clang-19"], capture_output=True).returncode == 0 else "?",
               "kernels": records}
        with open(a.resources_out, "w") as f:
            json.dump(rec, f, indent=1)
    for r in records:
        print(f"res  {r['target']:8s} {r['kernel'][:60]:60s} vgpr {r['vgpr']} agpr {r['agpr']} sgpr {r['sgpr']} "
              f"lds {r['lds_bytes']} scratch {r['scratch_bytes']} waves/SIMD {r['waves_per_simd']}")
    for f in failures:
        print("FAIL " + f)
    print(f"{a.name}: {len(failures)} failure(s), {len(records)} kernel resource record(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
