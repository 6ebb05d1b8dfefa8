#!/usr/bin/env python3
"""Fill wmma_declared.json (the declared nvcuda::wmma fragment layouts) from hardware probe records.

NVIDIA documents the wmma fragment element order as unspecified, so the declared layout of each
wmma atom is what a real GPU showed. Usage, after `flashprobe probe --all --out-dir DIR` on an H100
and committing DIR under reports/data/<device>/<run>/:
    python3 probes/nvidia/fill_wmma_declared.py reports/data/<device>/<run>/probe-SM80_WMMA_*.json
Writes {atom: {"A"|"B"|"C": layout JSON (rows, cols, lanes, slots, table), "_source": ...}} next to
this script: the memory-path layout with its duplicates. Records that are not ok or whose memory
paths did not reconcile with mma_sync are refused.
"""
import json
import os
import sys

out_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wmma_declared.json")
declared = json.load(open(out_path)) if os.path.exists(out_path) else {}
for path in sys.argv[1:]:
    rec = json.load(open(path))
    if rec.get("source") != "hardware" or not rec.get("atom", "").startswith("SM80_WMMA_"):
        continue
    rec_ok = rec.get("status") == "probed" and rec.get("ok") and rec.get("reconciliation", {}).get("ok")
    if not rec_ok:
        sys.exit(f"{path}: status {rec.get('status')}, verdict '{rec.get('verdict')}': not a layout to declare")
    entry = dict(rec["layout"])
    dev = rec.get("device") or {}
    entry["_source"] = f"{dev.get('name', '?')} {rec.get('arch', '?')}, commit {rec['commit']}, {rec['date']}"
    declared[rec["atom"]] = entry
with open(out_path, "w") as f:
    json.dump(declared, f, indent=0, sort_keys=True)
    f.write("\n")
print(f"{out_path}: {len(declared)} wmma atoms declared")
