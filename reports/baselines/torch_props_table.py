#!/usr/bin/env python3
"""A torch_props.json record (torch_props.py) as the Markdown table a record's README shows: per subject
and dtype the cases checked, refused, not bounded (backward cases judged NOT BOUNDED: neither passed nor
failed, oracle/BACKWARD_TOLERANCE.md), failed and crashed, the target and what stopped the run, with the
totals, every failure (each shard's) and the crashes' shrunk cases. Reads the replay record (replay/replay.json) beside it if there.

  python3 reports/baselines/torch_props_table.py DIR/torch_props.json
"""
import json
import os
import sys


def table(rec):
    env = rec.get("environment") or {}
    out = [f"PyTorch {env.get('torch', '?')}, CUDA {env.get('cuda', '?')}, cuDNN {env.get('cudnn', '?')}, "
           f"Triton {env.get('triton', '?')}, Hypothesis {env.get('hypothesis', '?')} on {env.get('gpu') or env.get('device')}; "
           f"{rec.get('jobs', 1)} processes, budget {rec.get('budget_s')} s, {rec.get('seconds')} s.", "",
           "| subject | dtype | checked | target | refused | not bounded | failed | crashed | stopped by | s |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rec.get("runs") or []:
        name = r.get("subject", "?") + (" (empty rows)" if r.get("empty_rows") else "")
        out.append(f"| {name} | {r.get('dtype')} | {r.get('checked', 0)} | {r.get('target', '')} | {r.get('refused', 0)} | "
                   f"{r.get('unbounded', 0)} | {r.get('failed', 0)} | {r.get('crashed', 0)} | {r.get('stopped_by')} | {r.get('seconds', '')} |")
    main = [r for r in rec.get("runs") or [] if not r.get("empty_rows")]
    out += ["", f"Main runs: {len(main)}, {sum(r.get('checked', 0) for r in main)} cases checked, "
                f"{sum(r.get('stopped_by') == 'target' for r in main)} at their target, "
                f"{sum(r.get('unbounded', 0) for r in main)} not bounded, "
                f"{sum(bool(r.get('failed')) for r in main)} failed."]
    for r in rec.get("runs") or []:
        # A merged row keeps every shard's failure in "failures" (older records: the first one in "failure").
        for f in r.get("failures") or ([r["failure"]] if r.get("failure") else []):
            saved = f" (`{f['saved']}`)" if f.get("saved") else ""
            out.append(f"- {r['subject']} {r['dtype']} failed: {(f.get('summary') or f.get('error') or '')[:300]}{saved}")
        for c in r.get("crashes") or []:
            s = c.get("shrunk") or {}
            shrunk = (f"; shrunk to {s.get('id')} ({', '.join(s.get('steps') or []) or 'no simpler problem'}), "
                      f"`{s.get('saved')}`") if s.get("reproduced") else (f"; {s.get('why')}" if s else "")
            out.append(f"- {r['subject']} {r['dtype']} crashed on {c.get('id')}: {c.get('error', '')[:200]}{shrunk}")
    return "\n".join(out)


def replay_lines(path):
    if not os.path.isfile(path):
        return ""
    with open(path) as f:
        rec = json.load(f)
    lines = ["", f"Replay of {rec.get('source')} ({(rec.get('case') or {}).get('problem', {})}):"]
    for s in rec.get("subjects") or []:
        sh = s.get("shrunk") or {}
        lines.append(f"- {s['subject']}: {s.get('verdict')} {s.get('summary') or s.get('error', '')[:200]}"
                     + (f"; shrunk to {sh.get('id')} ({', '.join(sh.get('steps') or [])})" if sh.get("reproduced") else ""))
    return "\n".join(lines)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        rec = json.load(f)
    print(table(rec) + replay_lines(os.path.join(os.path.dirname(argv[1]), "replay", "replay.json")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
