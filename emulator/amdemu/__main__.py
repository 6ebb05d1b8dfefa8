"""python3 -m amdemu (run from emulator/): the AMD mma kernel in tinygrad's emulator, every case
through the oracle's check, one record of the results. emulator/run is the command to use.

    FLASHPROBE_AMD_EMULATOR=/path/to/tinygrad python3 -m amdemu --build build/off --out DIR [--quick]

Exit 0: every case passed; 1: a case failed its check (or could not run); 2: bad usage (no
emulator, missing build outputs).
"""
import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys
import time
import traceback

from . import attention, backward, cases, defects, launch, probes
from .codeobject import CodeObject

FAMILY = {"gfx1100": "gfx11", "gfx1201": "gfx12", "gfx942": "cdna", "gfx90a": "cdna"}


def git(args, cwd):
    r = subprocess.run(["git"] + args, cwd=cwd, capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def emulator_state(root):
    """The emulator checkout's commit and, where it differs from that commit, what changed: the files
    and line counts and the sha256 of `git diff HEAD` (the diff itself is the emulator's code and stays
    out of the record). A run on a changed emulator says so in its evidence label."""
    commit = git(["rev-parse", "HEAD"], root)
    r = subprocess.run(["git", "diff", "HEAD"], cwd=root, capture_output=True)
    diff = r.stdout if r.returncode == 0 else b""
    state = {"repository": "https://github.com/tinygrad/tinygrad", "commit": commit,
             "module": "test/mockgpu/amd/emu.py", "local_changes": None}
    if diff:
        stat = git(["diff", "HEAD", "--numstat"], root).splitlines()
        state["local_changes"] = {"diff_sha256": hashlib.sha256(diff).hexdigest(),
                                  "files": [dict(zip(("added", "removed", "path"), l.split("\t"))) for l in stat]}
    return state


def source_label(state):
    changed = state["local_changes"]
    extra = f" with local changes, diff sha256 {changed['diff_sha256'][:12]}" if changed else ""
    return f"emulated (tinygrad emulator, commit {state['commit']}{extra}), not hardware"


def probe_note(r):
    u, i = r["used_slots"], r["ignored_slots"]
    text = f"{u['checked'] - u['wrong']} of {u['checked']} D slots as declared"
    if i["checked"]:
        text += f", C passed through in {i['checked'] - i['wrong']} of {i['checked']} unused slots"
    if r.get("diagnosis"):
        text += f" ({r['diagnosis']})"
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="a build tree with flashprobe, flashprobe_amd_plan, amd_kernels_mma")
    ap.add_argument("--out", required=True)
    ap.add_argument("--targets", nargs="+", default=["gfx1100"], choices=sorted(FAMILY))
    ap.add_argument("--quick", action="store_true", help="the first case of each target only")
    ap.add_argument("--only", default=None, help="run the cases (and atoms) whose name contains this")
    ap.add_argument("--atoms", default=None, help="run only the atoms whose name contains this (the cases as --only says)")
    ap.add_argument("--no-probes", action="store_true", help="skip the atoms' experiment kernels")
    ap.add_argument("--no-attention", action="store_true", help="skip the attention cases")
    ap.add_argument("--backward", action="store_true",
                    help="the backward cases instead (cases.BWD_CASES: the forward, then mma_bwd_amd, one check of both)")
    a = ap.parse_args()
    root = os.environ.get("FLASHPROBE_AMD_EMULATOR")
    if not root:
        print("FLASHPROBE_AMD_EMULATOR is not set: point it at a checkout of https://github.com/tinygrad/tinygrad",
              file=sys.stderr)
        return 2
    try:
        emu = launch.load_emulator(root)
    except launch.LaunchError as e:
        print(e, file=sys.stderr)
        return 2
    tools = {"plan": os.path.join(a.build, "emulator", "flashprobe_amd_plan"), "flashprobe": os.path.join(a.build, "flashprobe")}
    if not os.path.exists(tools["flashprobe"]):
        tools["flashprobe"] = os.path.join(a.build, "cli", "flashprobe")
    for t, p in tools.items():
        if t == "plan" and a.no_attention and not a.backward:
            continue  # the plan is the attention launch's; the atoms and defect checks do without it
        if not os.path.exists(p):
            print(f"--build {a.build}: {p} is missing (cmake --build {a.build} --target flashprobe flashprobe_amd_plan "
                  "amd_kernels_mma)", file=sys.stderr)
            return 2
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    emu_state = emulator_state(root)
    src_commit = git(["rev-parse", "HEAD"], src)  # at the start: the code objects are loaded from this tree now
    emu_commit = emu_state["commit"]
    # A changed emulator's results are other subjects than the upstream one's: both stay in the summary.
    tag = " [patched emulator]" if emu_state["local_changes"] else ""
    os.makedirs(a.out, exist_ok=True)
    results, items = [], []
    defect_results = []
    if "gfx1100" in a.targets:
        co_path = os.path.join(a.build, "amd", "gfx1100", "emulator_scratch.scratch_probe.co")
        if not os.path.exists(co_path):
            print(f"{co_path} is missing (cmake --build {a.build} --target amd_emulator_scratch)", file=sys.stderr)
            return 2
        r = defects.scratch_is_per_wave(emu, launch.LoadedImage(CodeObject(open(co_path, "rb").read()), co_path, "gfx1100"))
        defect_results.append(r)
        print(f"{'ok  ' if r['passed'] else 'DEFECT'} emulator: {r['check']}: {r['evidence']}", flush=True)
    if "gfx1201" in a.targets:
        co_path = os.path.join(a.build, "amd", "gfx1201", "emulator_wmma_inline_c.wmma_inline_c.co")
        if not os.path.exists(co_path):
            print(f"{co_path} is missing (cmake --build {a.build} --target amd_emulator_wmma_inline_c)", file=sys.stderr)
            return 2
        r = defects.wmma_inline_c_is_honoured(emu, launch.LoadedImage(CodeObject(open(co_path, "rb").read()), co_path,
                                                                      "gfx1201"))
        defect_results.append(r)
        print(f"{'ok  ' if r['passed'] else 'DEFECT'} emulator: {r['check']}: {r['evidence']}", flush=True)
    probe_results = []
    for tgt in a.targets:
        unit, atoms = cases.PROBE_ATOMS.get(tgt, (None, []))
        if a.no_probes or not atoms:
            continue
        co_path = os.path.join(a.build, "amd", tgt, unit)
        if not os.path.exists(co_path):
            print(f"{co_path} is missing (cmake --build {a.build} --target amd_{unit.split('.')[0]})", file=sys.stderr)
            return 2
        img = launch.LoadedImage(CodeObject(open(co_path, "rb").read()), co_path, tgt)
        for atom in atoms:
            if (a.only and a.only not in atom) or (a.atoms and a.atoms not in atom):
                continue
            t0 = time.time()
            try:
                r = probes.run_atom(emu, img, tools["flashprobe"], atom)
                r["error"] = None
            except Exception as e:
                r = {"atom": atom, "passed": False, "error": f"{type(e).__name__}: {e}",
                     "traceback": traceback.format_exc().splitlines()[-6:]}
            r.update(target=tgt, wall_seconds=round(time.time() - t0, 1))
            note = cases.EMULATOR_LIMITS.get(atom) if not r["passed"] else None
            r["emulator_limit"] = note
            probe_results.append(r)
            items.append({"check": "Atom layout (emulated)", "subject": f"{tgt} {atom}{tag}", "vendor": "amd", "run": 1,
                          "skipped": 0, "failed": 0 if r["passed"] else 1,
                          "note": r.get("error") or (probe_note(r) + (f"; {note}" if note else ""))})
            print(f"{'PASS' if r['passed'] else 'FAIL'} {tgt} {atom} ({r['wall_seconds']} s)"
                  + (f": {items[-1]['note']}" if not r["passed"] else ""), flush=True)
    for tgt in a.targets:
        co_path = os.path.join(a.build, "amd", tgt, "kernels_mma.mma_amd_check.co")
        if not os.path.exists(co_path):
            print(f"{co_path} is missing (cmake --build {a.build} --target amd_kernels_mma; needs ld.lld-19)", file=sys.stderr)
            return 2
        img = launch.LoadedImage(CodeObject(open(co_path, "rb").read()), co_path, tgt)
        bwd_img = None
        if a.backward:
            bwd_path = os.path.join(a.build, "amd", tgt, "kernels_mma_bwd.mma_bwd_amd_check.co")
            if not os.path.exists(bwd_path):
                print(f"{bwd_path} is missing (cmake --build {a.build} --target amd_kernels_mma_bwd)", file=sys.stderr)
                return 2
            bwd_img = launch.LoadedImage(CodeObject(open(bwd_path, "rb").read()), bwd_path, tgt)
        table = cases.BWD_CASES if a.backward else cases.CASES
        todo = [c for c in table.get(tgt, []) if (not a.only or a.only in c["name"]) and not a.no_attention]
        if a.quick:
            todo = todo[:1]
        for c in todo:
            case_dir = os.path.join(a.out, tgt, c["name"])
            t0 = time.time()
            try:
                if bwd_img:
                    r = backward.run_case(emu, tools, img, bwd_img, FAMILY[tgt], c["problem"], c.get("seed", 1), case_dir)
                else:
                    r = attention.run_case(emu, tools, img, FAMILY[tgt], c["problem"], c.get("seed", 1), case_dir)
                r["error"] = None
            except Exception as e:  # one case's failure is recorded, the run goes on
                r = {"problem": c["problem"], "passed": False, "error": f"{type(e).__name__}: {e}",
                     "traceback": traceback.format_exc().splitlines()[-6:]}
            r.update(name=c["name"], target=tgt, why=c.get("why", ""), wall_seconds=round(time.time() - t0, 1))
            bad_atoms = [p["atom"] for p in probe_results
                         if p["target"] == tgt and not p["passed"] and p["atom"] in (r.get("kernel") or str(r.get("kernels")))]
            if not r["passed"] and bad_atoms:
                r["emulator_defect"] = (f"the kernel's atom {bad_atoms[0]} already disagrees with its declared layout "
                                        "in this emulator (its atom check above; AMD's calculator agrees with the "
                                        "declared layout)")
            shared_scratch = any(not d["passed"] and d["check"].startswith("scratch") for d in defect_results)
            # Every demonstrated defect the failing kernel can meet is named (several may apply).
            causes = [r["emulator_defect"]] if r.get("emulator_defect") else []
            # A backward case runs the forward too: its kernels' spills and constant-C WMMAs count as well.
            spill = r.get("scratch_bytes")
            spill = max(list(spill.values()) + [r.get("forward_scratch_bytes") or 0]) if isinstance(spill, dict) else spill
            if not r["passed"] and spill and shared_scratch:
                causes.append(f"the kernel spills {spill} B per lane to scratch and the emulator's "
                              "waves share one scratch area (demonstrated: scratch_is_per_wave)")
            inline_c = any(not d["passed"] and d["check"].startswith("a gfx12 WMMA") for d in defect_results)
            fwd_kernel = r.get("kernel") or r.get("forward_kernel")
            n_const_c = (defects.wmma_const_c(img.listing, fwd_kernel) if fwd_kernel else 0) + sum(
                defects.wmma_const_c(bwd_img.listing, k) for k in (r.get("kernels") or {}).values())
            if not r["passed"] and inline_c and n_const_c:
                causes.append(f"{n_const_c} of the kernel's WMMAs take C as an inline constant and the emulator "
                              "reads C from v128.. instead (demonstrated: wmma_inline_c_is_honoured)")
            if causes:
                r["emulator_defect"] = "; ".join(causes)
            results.append(r)
            check, kname = ("Backward vs gradient oracle (emulated)", "mma_bwd_amd") if a.backward else ("Attention vs oracle (emulated)", "mma")
            items.append({"check": check, "subject": f"{tgt} {kname} {c['name']}{tag}", "vendor": "amd",
                          "run": 1, "skipped": 0, "failed": 0 if r["passed"] else 1,
                          "note": r.get("error") or r.get("emulator_defect") or (r.get("output") or [""])[-1][:200]})
            print(f"{'PASS' if r['passed'] else 'FAIL'} {tgt} {c['name']} ({r['wall_seconds']} s)"
                  + (f": {r['error']}" if r.get("error") else ""), flush=True)
    rec = {"schema": "flashprobe.emulated/1",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "commit": src_commit,
           "device": None,
           "evidence": "emulated",
           "source": source_label(emu_state),
           "emulator": emu_state,
           "summary": items, "emulator_checks": defect_results, "atoms": probe_results, "cases": results}
    with open(os.path.join(a.out, "emulated.json"), "w") as f:
        json.dump(rec, f, indent=1)
    failed = sum(1 for r in results + probe_results if not r["passed"])
    print(f"{len(probe_results)} atoms, {len(results)} cases, {failed} failed: {os.path.join(a.out, 'emulated.json')} "
          f"({source_label(emu_state)})")
    return 1 if failed or not (results or probe_results) else 0


if __name__ == "__main__":
    sys.exit(main())
