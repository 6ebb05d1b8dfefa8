#!/usr/bin/env bash
# Checks the cases written by torch_oracle_check.py with `flashprobe check` and writes a summary.
#   reports/baselines/run_oracle_crosscheck.sh OUT [path/to/flashprobe] [summary.json]
# Per case: the oracle against PyTorch's float64 SDPA (--ref-o, relative agreement), each fused
# backend's output against the oracle, and one deliberately corrupted output that must fail.
# Exit 0 when every fused output passed, the float64 agreement held and the corrupted one failed.
set -uo pipefail
out=${1:?usage: run_oracle_crosscheck.sh OUT [flashprobe] [summary.json]}
fp=${2:-build/cuda/flashprobe}
summary=${3:-$out/summary.json}
[ -x "$fp" ] || { echo "no flashprobe executable at $fp" >&2; exit 2; }

for c in "$out"/case*/; do
  c=${c%/}
  args=(--problem "$c/problem.json" --q "$c/q.npy" --k "$c/k.npy" --v "$c/v.npy")
  "$fp" check "${args[@]}" --ref-o "$c/o64.npy" --ref-rtol 1e-10 --json "$c/ref64.json" > "$c/ref64.txt" 2>&1
  echo $? > "$c/ref64.rc"
  for o in "$c"/o_*.npy; do
    [ -e "$o" ] || continue
    b=$(basename "$o" .npy); b=${b#o_}
    "$fp" check "${args[@]}" --o "$o" --json "$c/check_$b.json" > "$c/check_$b.txt" 2>&1
    echo $? > "$c/check_$b.rc"
  done
done

# One corrupted output: the first fused output found, one element moved by 10% of max|O| + 0.1.
first=$(ls "$out"/case*/o_*.npy 2>/dev/null | head -n 1)
corrupt_rc=none
if [ -n "$first" ]; then
  c=$(dirname "$first")
  python3 - "$first" "$c/corrupted.npy" <<'PY'
import sys, numpy as np
a = np.load(sys.argv[1])
bf16 = a.dtype == np.int16  # bf16 bit patterns
vals = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32) if bf16 else a.astype(np.float32)
i = vals.size // 2
new = np.array([vals.flat[i] + 0.1 * float(np.abs(vals).max()) + 0.1], dtype=np.float32)
b = a.copy()
if bf16:
    b.flat[i] = ((new.view(np.uint32) + 0x8000) >> 16).astype(np.uint16).view(np.int16)[0]
else:
    b.flat[i] = new[0]
np.save(sys.argv[2], b)
PY
  "$fp" check --problem "$c/problem.json" --q "$c/q.npy" --k "$c/k.npy" --v "$c/v.npy" --o "$c/corrupted.npy" \
    --json "$c/check_corrupted.json" > "$c/check_corrupted.txt" 2>&1
  corrupt_rc=$?
fi

python3 - "$out" "$summary" "$corrupt_rc" "$first" <<'PY'
import glob, json, os, sys
out, summary_path, corrupt_rc, corrupted_from = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
manifest = json.load(open(os.path.join(out, "manifest.json")))
per_backend, ref = {}, {"cases": 0, "agree": 0, "max_rel": 0.0, "worst": None}
for case in manifest["cases"]:
    c = os.path.join(out, case["name"])
    r = json.load(open(os.path.join(c, "ref64.json"))) if os.path.exists(os.path.join(c, "ref64.json")) else None
    ref["cases"] += 1
    if r and "ref_o" in r:
        ref["agree"] += bool(r["ref_o"]["agree"])
        if r["ref_o"]["rel"] >= ref["max_rel"]:
            ref["max_rel"], ref["worst"] = r["ref_o"]["rel"], case["name"]
    for b in ("flash", "cudnn", "efficient"):
        s = per_backend.setdefault(b, {"ran": 0, "refused": 0, "passed": 0, "failed": [], "max_margin": 0.0,
                                       "margins": [], "ran_as": {}})
        if b in case["refused"]:
            s["refused"] += 1
            continue
        p = os.path.join(c, "check_%s.json" % b)
        if not os.path.exists(p):
            s["failed"].append({"case": case["name"], "reason": "no check record (exit %s)" % open(os.path.join(c, "check_%s.rc" % b)).read().strip() if os.path.exists(os.path.join(c, "check_%s.rc" % b)) else "not run"})
            s["ran"] += 1
            continue
        j = json.load(open(p))
        s["ran"] += 1
        s["ran_as"][case["ran"].get(b, "?")] = s["ran_as"].get(case["ran"].get(b, "?"), 0) + 1
        m = j["o"]["margin"]
        m = float("inf") if isinstance(m, str) else m
        s["margins"].append(m)
        s["max_margin"] = max(s["max_margin"], m)
        if j["pass"]:
            s["passed"] += 1
        else:
            s["failed"].append({"case": case["name"], "reason": j["reason"]})
for s in per_backend.values():
    s["pass_rate"] = s["passed"] / s["ran"] if s["ran"] else None
    ms = sorted(s.pop("margins"))
    s["median_margin"] = ms[len(ms) // 2] if ms else None
summary = {
    "torch": manifest["torch"], "device": manifest["device"], "cuda": manifest["cuda"], "cudnn": manifest["cudnn"],
    "cases": len(manifest["cases"]),
    "float64_agreement": ref,
    "backends": per_backend,
    "corrupted": {"from": corrupted_from, "exit_code": corrupt_rc, "caught": corrupt_rc == "1"},
}
json.dump(summary, open(summary_path, "w"), indent=1)
print(json.dumps({k: v for k, v in summary.items() if k != "backends"}, indent=1))
for b, s in per_backend.items():
    print("%-10s ran %3d refused %3d passed %3d  max margin %s" % (b, s["ran"], s["refused"], s["passed"], s["max_margin"]))
ok = all(not s["failed"] for s in per_backend.values()) and ref["agree"] == ref["cases"] and corrupt_rc == "1"
sys.exit(0 if ok else 1)
PY
