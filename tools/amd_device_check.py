#!/usr/bin/env python3
"""Check AMD device code: which instructions the compiler emitted, and what resources each kernel uses.

Two inputs, the same checks:
  * --asm-dir DIR (cmake/AmdDeviceCode.cmake, clang-19): reads DIR/<target>/<name>.*.s per target;
  * --objects FILE... (the packaged hipcc's build): unbundles each target's code object from the
    host objects/executables with clang-offload-bundler, disassembles it with llvm-objdump and reads
    its metadata note with llvm-readelf (Debian's LLVM 19 tools, else LLVM 15).

For every target:
  * each --expect "TARGET:REGEX" must hold for the whole unit (TARGET may be '*'; a REGEX starting
    with '!' must be absent), or "TARGET@KERNEL_REGEX:REGEX" for the bodies of the kernels whose
    mangled name matches KERNEL_REGEX (at least one kernel must match);
  * per kernel the resource usage is read from the code-object metadata (.amdgpu_metadata): VGPR,
    AGPR, SGPR counts, spills, LDS (group segment) and scratch (private segment) bytes, wave size,
    and the resulting waves per SIMD (see TARGETS and waves_per_simd for the rules and sources);
  * with --require-no-calls, no call may remain (s_swappc_b64 / s_call_b64 anywhere in the unit) and no
    kernel may use a dynamic stack: the device libraries were linked and inlined, so the figures are
    those of a real build (each record says "calls" and "dynamic_stack");
  * the records go to --resources-out as JSON, labelled "compiled, not run".
Exit 0 when every expectation holds, 1 otherwise (with the evidence), 2 on bad usage.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Register files and occupancy limits per target. The rules are LLVM's (AMDGPUBaseInfo.cpp,
# namespace IsaInfo: getTotalNumVGPRs, getVGPRAllocGranule, getMaxWavesPerEU,
# getOccupancyWithNumSGPRs, getLocalMemorySize, getEUsPerCU, getMaxWorkGroupsPerCU), cross-checked
# with ROCm comgr's ISA table (amd/comgr/src/comgr-isa-metadata.def: LDS size, VGPR granule/total)
# and the ISA guides:
#   * RDNA3 gfx1100/gfx1101 and RDNA4 gfx1200/gfx1201 have the 1.5x register file: 1536 VGPRs per
#     lane in wave32 (768 in wave64), allocated in granules of 24 (12); 192 KB per SIMD. gfx1102/
#     gfx1103 keep 1024 (512) in granules of 16 (8). Up to 16 waves per SIMD (gfx10.3 and later).
#     SGPRs do not limit occupancy from gfx10 on. LDS: 64 KB per CU, 128 KB per WGP; the default
#     WGP mode (cumode off) shares it among the WGP's 4 SIMDs, at most 32 workgroups (barriers).
#   * CDNA2/CDNA3 gfx90a/gfx940/gfx941/gfx942: one unified 512-entry file per lane (arch VGPRs
#     then AGPRs, the arch part rounded up to 4), granule 8, at most 8 waves per SIMD; SGPR limits
#     of gfx8/gfx9 (<=80 -> 10 waves, <=88 -> 9, <=100 -> 8, else 7); 64 KB LDS per CU, 4 SIMDs,
#     at most 16 workgroups per CU.
#   * CDNA1 gfx908: 256 arch VGPRs and a separate 256-entry AGPR file, granule 4, 10 waves per SIMD.
TARGETS = {
    "gfx1100": dict(vgprs={32: 1536, 64: 768}, granule={32: 24, 64: 12}, max_waves=16, lds=131072, simds=4, max_wgs=32, family="RDNA3"),
    "gfx1101": dict(vgprs={32: 1536, 64: 768}, granule={32: 24, 64: 12}, max_waves=16, lds=131072, simds=4, max_wgs=32, family="RDNA3"),
    "gfx1102": dict(vgprs={32: 1024, 64: 512}, granule={32: 16, 64: 8}, max_waves=16, lds=131072, simds=4, max_wgs=32, family="RDNA3"),
    "gfx1200": dict(vgprs={32: 1536, 64: 768}, granule={32: 24, 64: 12}, max_waves=16, lds=131072, simds=4, max_wgs=32, family="RDNA4"),
    "gfx1201": dict(vgprs={32: 1536, 64: 768}, granule={32: 24, 64: 12}, max_waves=16, lds=131072, simds=4, max_wgs=32, family="RDNA4"),
    "gfx908": dict(vgprs={64: 256}, granule={64: 4}, max_waves=10, lds=65536, simds=4, max_wgs=16, family="CDNA1", sgpr_limited=True, separate_agprs=True),
    "gfx90a": dict(vgprs={64: 512}, granule={64: 8}, max_waves=8, lds=65536, simds=4, max_wgs=16, family="CDNA2", unified=True, sgpr_limited=True),
    "gfx940": dict(vgprs={64: 512}, granule={64: 8}, max_waves=8, lds=65536, simds=4, max_wgs=16, family="CDNA3", unified=True, sgpr_limited=True),
    "gfx941": dict(vgprs={64: 512}, granule={64: 8}, max_waves=8, lds=65536, simds=4, max_wgs=16, family="CDNA3", unified=True, sgpr_limited=True),
    "gfx942": dict(vgprs={64: 512}, granule={64: 8}, max_waves=8, lds=65536, simds=4, max_wgs=16, family="CDNA3", unified=True, sgpr_limited=True),
}


CALL = re.compile(r"^s_(swappc|call)_b64\b")


def parse_metadata(text):
    """The kernels of an .amdgpu_metadata / 'AMDGPU Metadata' YAML block, as dicts of scalar fields."""
    m = re.search(r"\.amdgpu_metadata(.*?)\.end_amdgpu_metadata", text, re.S)
    block = m.group(1) if m else text
    kernels, cur = [], None
    in_args = False
    for line in block.splitlines():
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
            key, val = km.group(1)[1:], km.group(2).strip().strip("'\"")
            if re.fullmatch(r"-?\d+", val):
                val = int(val)
            cur[key] = val
        elif in_args:
            continue
    return [k for k in kernels if "name" in k and "vgpr_count" in k]


def instruction(line):
    """An instruction line without llvm-objdump's trailing '// address: encoding' comment."""
    return re.sub(r"\s*//.*$", "", line.strip())


def kernel_bodies(code_text, names):
    """Map kernel name -> its instruction lines, from clang assembly or llvm-objdump output."""
    bodies, cur = {}, None
    for line in code_text.splitlines():
        lm = re.match(r"^(?:[0-9a-f]+ )?<?([\w.$]+)>?:", line)
        if lm and lm.group(1) in names:
            cur = lm.group(1)
            bodies[cur] = []
            continue
        if cur and (line.startswith(".Lfunc_end") or re.match(r"^[0-9a-f]+ <", line)):
            cur = None
            continue
        if cur and line.startswith(("\t", " ")) and not line.lstrip().startswith((".", ";")):
            bodies[cur].append(instruction(line))
    return bodies


def waves_per_simd(target, k):
    """Waves per SIMD for kernel metadata k on target, with the resource that limits them."""
    t = TARGETS.get(target)
    if not t:
        return None, None
    wave = int(k.get("wavefront_size", 64))
    vg = int(k.get("vgpr_count", 0))
    agpr = int(k.get("agpr_count", 0))
    if t.get("unified") and agpr > 0:
        vg = -(-vg // 4) * 4 + agpr  # arch VGPRs padded to 4, then AGPRs
    elif t.get("separate_agprs"):
        vg = max(vg, agpr)  # two files of equal size: the fuller one limits
    g = t["granule"][wave]
    total = t["vgprs"][wave]
    limits = {"waves": t["max_waves"]}
    limits["vgpr"] = t["max_waves"] if vg < g else min(max(total // (-(-vg // g) * g), 1), t["max_waves"])
    if t.get("sgpr_limited"):
        s = int(k.get("sgpr_count", 0))
        limits["sgpr"] = 10 if s <= 80 else 9 if s <= 88 else 8 if s <= 100 else 7
    wg = int(k.get("max_flat_workgroup_size", wave)) or wave
    waves_per_wg = max(1, -(-wg // wave))
    lds = int(k.get("group_segment_fixed_size", 0))
    max_waves_cu = t["max_waves"] * t["simds"]
    wgs = max_waves_cu if waves_per_wg == 1 else min(max_waves_cu // waves_per_wg, t["max_wgs"])
    if lds > 0:
        wgs = min(wgs, t["lds"] // lds)
        limits["lds"] = wgs * waves_per_wg // t["simds"]
    else:
        limits["workgroups"] = wgs * waves_per_wg // t["simds"]
    by = min(limits, key=lambda n: (limits[n], n != "waves"))
    return max(0, limits[by]), by


def tool(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def unbundle(objects, target, workdir):
    """The (disassembly, metadata) text of target's code objects inside the given host files."""
    bundler = tool("clang-offload-bundler-15", "clang-offload-bundler", "clang-offload-bundler-19")
    # LLVM 19's disassembler first: LLVM 15 still prints gfx940's renamed MFMAs with their gfx90a
    # spelling (v_mfma_f32_32x32x8f16 for the same encoding as v_mfma_f32_32x32x8_f16).
    objdump = tool("llvm-objdump-19", "llvm-objdump-15", "llvm-objdump")
    readelf = tool("llvm-readelf-19", "llvm-readelf-15", "llvm-readelf")
    objcopy = tool("llvm-objcopy-19", "llvm-objcopy-15", "llvm-objcopy", "objcopy")
    if not (bundler and objdump and readelf and objcopy):
        raise RuntimeError("needs clang-offload-bundler, llvm-objdump, llvm-readelf and objcopy (Debian: llvm-19, clang-19)")
    dis, meta, found = [], [], 0
    for i, obj in enumerate(objects):
        fatbin = os.path.join(workdir, f"{i}.hip_fatbin")
        r = subprocess.run([objcopy, "--dump-section", f".hip_fatbin={fatbin}", obj, os.path.join(workdir, "discard")],
                           capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(fatbin):
            continue
        listing = subprocess.run([bundler, "--list", "--type=o", f"--input={fatbin}"], capture_output=True, text=True).stdout.split()
        for entry in listing:
            if not re.search(rf"--{target}(?::|$)", entry):
                continue
            co = os.path.join(workdir, f"{i}.{target}.co")
            subprocess.run([bundler, "--unbundle", "--type=o", f"--input={fatbin}", f"--targets={entry}", f"--output={co}"],
                           check=True, capture_output=True)
            found += 1
            dis.append(subprocess.run([objdump, "-d", f"--mcpu={target}", co], capture_output=True, text=True, check=True).stdout)
            meta.append(subprocess.run([readelf, "--notes", co], capture_output=True, text=True, check=True).stdout)
    return "\n".join(dis), "\n".join(meta), found


def git_commit(path):
    r = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True)
    if r.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "-C", path, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return r.stdout.strip() + ("-dirty" if dirty else "")


def compiler_version(exe):
    if not exe or not tool(exe):
        return "?"
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.splitlines()
    return out[0] if out else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", required=True)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--asm-dir", help="clang-19 assembly: DIR/<target>/<name>.*.s")
    src.add_argument("--objects", nargs="+", help="host objects/executables holding HIP fat binaries")
    ap.add_argument("--targets", nargs="+", required=True)
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--resources-out")
    ap.add_argument("--device-libs", default=None, help="device-library folder the build linked (named in the record)")
    ap.add_argument("--require-no-calls", action="store_true",
                    help="fail on any call instruction or dynamic stack (device libraries must be linked)")
    ap.add_argument("--compiler", default=None, help="compiler named in the record (default: clang-19, or hipcc with --objects)")
    ap.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="git checkout whose commit the record names")
    a = ap.parse_args()

    expects = []
    for e in a.expect:
        m = re.match(r"^([\w*]+)(?:@([^:]+))?:(.*)$", e)
        if not m:
            print(f"bad --expect '{e}': use TARGET:REGEX or TARGET@KERNEL_REGEX:REGEX", file=sys.stderr)
            return 2
        try:
            rx = re.compile(m.group(3)[1:] if m.group(3).startswith("!") else m.group(3))
            krx = re.compile(m.group(2)) if m.group(2) else None
        except re.error as err:
            print(f"bad regex in --expect '{e}': {err}", file=sys.stderr)
            return 2
        expects.append((m.group(1), krx, m.group(3).startswith("!"), rx, m.group(3).lstrip("!")))

    failures, records = [], []
    with tempfile.TemporaryDirectory() as work:
        for tgt in a.targets:
            if a.asm_dir:
                files = sorted(glob.glob(os.path.join(a.asm_dir, tgt, a.name + ".*.s")))
                if not files:
                    failures.append(f"{tgt}: no assembly for {a.name} under {a.asm_dir}/{tgt} (was the target built?)")
                    continue
                text = "\n".join(open(f).read() for f in files)
                code_text, meta_text = text, text
            else:
                try:
                    code_text, meta_text, n = unbundle(a.objects, tgt, work)
                except (RuntimeError, subprocess.CalledProcessError) as err:
                    failures.append(f"{tgt}: could not extract code objects: {err}")
                    continue
                if n == 0:
                    failures.append(f"{tgt}: no {tgt} code object in {' '.join(a.objects)}")
                    continue
            kernels = parse_metadata(meta_text)
            names = {k["name"] for k in kernels}
            bodies = kernel_bodies(code_text, names)
            # The whole unit: every instruction line, kernels or not (device functions that were not
            # inlined count too).
            unit = [instruction(l) for l in code_text.splitlines()
                    if l.startswith("\t") and not l.lstrip().startswith((".", ";"))]
            for et, krx, absent, rx, pat in expects:
                if et not in ("*", tgt):
                    continue
                if krx:
                    scopes = {n: b for n, b in bodies.items() if krx.search(n)}
                    if not scopes:
                        failures.append(f"{tgt}: no kernel matches '{krx.pattern}' in {a.name} (kernels: {sorted(bodies)})")
                        continue
                else:
                    scopes = {"*": unit}
                for scope, lines in scopes.items():
                    hits = [l for l in lines if rx.search(l)]
                    where = a.name if scope == "*" else scope
                    if absent and hits:
                        failures.append(f"{tgt}: '{pat}' must be absent from {where} but appears {len(hits)}x, e.g. '{hits[0]}'")
                    elif not absent and not hits:
                        failures.append(f"{tgt}: expected an instruction matching '{pat}' in {where}, found none")
                    else:
                        print(f"ok   {tgt:8s} {where[:70]}: {'no ' if absent else ''}'{pat}'" +
                              (f" ({len(hits)}x, e.g. {hits[0]})" if hits else ""))
            calls = [l for l in unit if CALL.match(l)]
            if a.require_no_calls:
                if calls:
                    failures.append(f"{tgt}: {len(calls)} call(s) remain in {a.name}, e.g. '{calls[0]}' "
                                    "(device libraries not linked or not inlined)")
                for k in kernels:
                    if str(k.get("uses_dynamic_stack", "false")).lower() == "true":
                        failures.append(f"{tgt}: {k.get('name')} uses a dynamic stack (a call the compiler "
                                        "could not bound)")
                if not calls:
                    print(f"ok   {tgt:8s} {a.name}: no calls, {len(kernels)} kernel(s) without dynamic stack"
                          if not any(str(k.get("uses_dynamic_stack", "false")).lower() == "true" for k in kernels)
                          else f"..   {tgt:8s} {a.name}: no calls")
            for k in kernels:
                w, by = waves_per_simd(tgt, k)
                records.append({
                    "target": tgt, "family": TARGETS.get(tgt, {}).get("family", "?"), "unit": a.name,
                    "kernel": k.get("name"), "wave_size": k.get("wavefront_size"),
                    "vgpr": k.get("vgpr_count"), "agpr": k.get("agpr_count", 0), "sgpr": k.get("sgpr_count"),
                    "vgpr_spill": k.get("vgpr_spill_count", 0), "sgpr_spill": k.get("sgpr_spill_count", 0),
                    "lds_bytes": k.get("group_segment_fixed_size", 0),
                    "scratch_bytes": k.get("private_segment_fixed_size", 0),
                    "max_workgroup_size": k.get("max_flat_workgroup_size"),
                    "waves_per_simd": w, "occupancy_limited_by": by,
                    "calls": sum(1 for l in bodies.get(k.get("name"), []) if CALL.match(l)),
                    "dynamic_stack": str(k.get("uses_dynamic_stack", "false")).lower() == "true",
                    # Lets reports tell a kernel that runs its instruction on this target from the
                    # wrong-target trap copy that every multi-target build also contains.
                    "matrix_instructions": sum(1 for l in bodies.get(k.get("name"), []) if re.match(r"v_(wmma|mfma|smfmac)_", l)),
                    "traps": any(l.startswith("s_trap") for l in bodies.get(k.get("name"), [])),
                })
    if a.resources_out:
        compiler = a.compiler or ("hipcc" if a.objects else "clang-19")
        rec = {"schema": "flashprobe.resources/1",
               "status": "compiled, not run",
               "source": ("packaged hipcc code objects" if a.objects else "clang-19 assembly") +
                         " (code-object metadata; compiled, not run on any AMD GPU)",
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "commit": git_commit(a.source_dir),
               "compiler": compiler_version(compiler),
               "unit": a.name, "targets": a.targets,
               "device_libs": a.device_libs or "not linked",
               "kernels": records}
        with open(a.resources_out, "w") as f:
            json.dump(rec, f, indent=1)
    for r in records:
        print(f"res  {r['target']:8s} {str(r['kernel'])[:64]:64s} vgpr {r['vgpr']} agpr {r['agpr']} sgpr {r['sgpr']} "
              f"lds {r['lds_bytes']} scratch {r['scratch_bytes']} waves/SIMD {r['waves_per_simd']} ({r['occupancy_limited_by']})")
    for f in failures:
        print("FAIL " + f)
    print(f"{a.name}: {len(failures)} failure(s), {len(records)} kernel resource record(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
