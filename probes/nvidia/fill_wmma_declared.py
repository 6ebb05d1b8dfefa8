#!/usr/bin/env python3
"""Fill wmma_declared.json (the declared nvcuda::wmma fragment layouts) from hardware probe records.

NVIDIA documents the wmma fragment element order as unspecified, so the declared layout of each
wmma atom is what a real GPU showed. Usage, after an H100 run whose records are committed:
    python3 probes/nvidia/fill_wmma_declared.py reports/data/h100-80gb-hbm3/<run>/probe-WMMA_*.json
Writes {atom: {operand: [[row, col] per lane * slots + slot]}} next to this script. Records with
anomalies or a verdict other than a reconciled one are refused.
"""
import json
import os
import sys

out_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wmma_declared.json")
declared = json.load(open(out_path)) if os.path.exists(out_path) else {}
for path in sys.argv[1:]:
    rec = json.load(open(path))
    if rec.get("family") != "wmma" or rec.get("source") != "hardware":
        continue
    if rec["verdict"].startswith("differs") or any(op["anomalies"] for op in rec["operands"]):
        sys.exit(f"{path}: verdict '{rec['verdict']}' or anomalies: not a layout to declare")
    declared[rec["atom"]] = {op["name"]: op["at"] for op in rec["operands"]}
    declared[rec["atom"]]["_source"] = f"{rec['device']['name'] if rec.get('device') else '?'}, commit {rec['commit']}, {rec['date']}"
with open(out_path, "w") as f:
    json.dump(declared, f, indent=0, sort_keys=True)
    f.write("\n")
print(f"{out_path}: {len(declared)} wmma atoms declared")
