#!/usr/bin/env python3
"""Renames a kernel in a bench record (flashprobe.bench/1) in place: rename_kernel.py FILE OLD NEW.
OLD '*' matches every kernel, and a '*' in NEW stands for the old name ('*' '*-baseline').

Variants timed under a measurement knob (a schedule, an older build) keep their own name in the
records, so that the report never takes them for the dispatched kernel."""
import json
import sys


def main():
    if len(sys.argv) != 4:
        print("usage: rename_kernel.py FILE OLD NEW", file=sys.stderr)
        return 2
    path, old, new = sys.argv[1:]
    try:
        with open(path) as f:
            rec = json.load(f)
    except (OSError, ValueError) as e:
        print(f"rename_kernel: {path}: {e}", file=sys.stderr)
        return 1
    n = 0
    for r in rec.get("results", []):
        k = r.get("kernel")
        if k is not None and (old == "*" or k == old):
            r["kernel"] = new.replace("*", k)
            n += 1
    with open(path, "w") as f:
        json.dump(rec, f, indent=1)
    print(f"rename_kernel: {path}: {n} record(s) {old} -> {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
