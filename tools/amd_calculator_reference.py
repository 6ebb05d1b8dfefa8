#!/usr/bin/env python3
"""Reference layouts of every AMD atom from AMD's Matrix Instruction Calculator.

The calculator (github.com/ROCm/amd_matrix_instruction_calculator) is fetched and run beside the
project, never copied into it:

    git clone https://github.com/ROCm/amd_matrix_instruction_calculator /work/ext/calc
    python3 -m venv /work/ext/venv && /work/ext/venv/bin/pip install tabulate
    /work/ext/venv/bin/python tools/amd_calculator_reference.py --calculator /work/ext/calc \\
        --out reports/data/amd-documented/2026-11-26-calculator/layouts.json

For each atom it asks the calculator for the A, B, C and D register layouts (--matrix-layout --csv)
of the instruction behind it, once per architecture that spells it (CDNA1/2/3), and writes the
tables as [lane][slot] -> [row, col] (null: the slot holds no element) with the calculator's
repository, commit, version and the exact command of every table. Slots follow the atoms' packing
(flashprobe/atoms/amd_matrix.cuh): a 32-bit register holds one f32, two 16-bit values (low half
first) or four fp8 bytes, so slot = register * (32 / bits) + low bit / bits.
tests/probes_amd/test_amd_calculator.cpp compares every slot with the atoms' declared layouts.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

REPO = "https://github.com/ROCm/amd_matrix_instruction_calculator"

# atom -> [(architecture, instruction, wavefront or None, opsel or None)]. OPSEL of the gfx11
# 16-bit accumulator forms is the calculator's 3-bit field: bit 2 selects the D half (4 = high).
def _gfx11(wave):
    w = f"_W{wave}"
    out = {
        "GFX11_WMMA_16x16x16_F32F16" + w: [("RDNA3", "v_wmma_f32_16x16x16_f16", wave, None)],
        "GFX11_WMMA_16x16x16_F32BF16" + w: [("RDNA3", "v_wmma_f32_16x16x16_bf16", wave, None)],
    }
    for half, opsel in (("LO", 0), ("HI", 4)):
        out[f"GFX11_WMMA_16x16x16_F16F16{w}_OPSEL_{half}"] = [("RDNA3", "v_wmma_f16_16x16x16_f16", wave, opsel)]
        out[f"GFX11_WMMA_16x16x16_BF16BF16{w}_OPSEL_{half}"] = [("RDNA3", "v_wmma_bf16_16x16x16_bf16", wave, opsel)]
    return out


ATOMS = {
    **_gfx11(32),
    **_gfx11(64),
    "GFX12_WMMA_16x16x16_F32F16_W32": [("RDNA4", "v_wmma_f32_16x16x16_f16", 32, None)],
    "GFX12_WMMA_16x16x16_F32BF16_W32": [("RDNA4", "v_wmma_f32_16x16x16_bf16", 32, None)],
    "GFX12_WMMA_16x16x16_F32F16_W64": [("RDNA4", "v_wmma_f32_16x16x16_f16", 64, None)],
    "GFX12_WMMA_16x16x16_F32BF16_W64": [("RDNA4", "v_wmma_f32_16x16x16_bf16", 64, None)],
    "GFX12_WMMA_16x16x16_F32E4M3_W32": [("RDNA4", "v_wmma_f32_16x16x16_fp8_fp8", 32, None)],
    "GFX12_WMMA_16x16x16_F32E4M3_W64": [("RDNA4", "v_wmma_f32_16x16x16_fp8_fp8", 64, None)],
    **{f"GFX12_WMMA_16x16x16_F32{name}_W{wave}": [("RDNA4", f"v_wmma_f32_16x16x16_{instr}", wave, None)]
       for name, instr in (("E4M3E5M2", "fp8_bf8"), ("E5M2E4M3", "bf8_fp8"), ("E5M2", "bf8_bf8"))
       for wave in (32, 64)},
    "CDNA_MFMA_32x32x8_F32F16": [("CDNA1", "v_mfma_f32_32x32x8f16", None, None),
                                 ("CDNA2", "v_mfma_f32_32x32x8f16", None, None),
                                 ("CDNA3", "v_mfma_f32_32x32x8_f16", None, None)],
    "CDNA_MFMA_16x16x16_F32F16": [("CDNA1", "v_mfma_f32_16x16x16f16", None, None),
                                  ("CDNA2", "v_mfma_f32_16x16x16f16", None, None),
                                  ("CDNA3", "v_mfma_f32_16x16x16_f16", None, None)],
    "CDNA_MFMA_32x32x8_F32BF16_1K": [("CDNA2", "v_mfma_f32_32x32x8bf16_1k", None, None),
                                     ("CDNA3", "v_mfma_f32_32x32x8_bf16", None, None)],
    "CDNA_MFMA_16x16x16_F32BF16_1K": [("CDNA2", "v_mfma_f32_16x16x16bf16_1k", None, None),
                                      ("CDNA3", "v_mfma_f32_16x16x16_bf16", None, None)],
    "CDNA_MFMA_16x16x32_F32E4M3": [("CDNA3", "v_mfma_f32_16x16x32_fp8_fp8", None, None)],
    "CDNA_MFMA_32x32x16_F32E4M3": [("CDNA3", "v_mfma_f32_32x32x16_fp8_fp8", None, None)],
    **{f"CDNA_MFMA_{shape}_F32{name}": [("CDNA3", f"v_mfma_f32_{shape}_{instr}", None, None)]
       for name, instr in (("E4M3E5M2", "fp8_bf8"), ("E5M2E4M3", "bf8_fp8"), ("E5M2", "bf8_bf8"))
       for shape in ("16x16x32", "32x32x16")},
}

HEADER = re.compile(r"^v(\d+)(?:\.\[(\d+):(\d+)\])?$")
ENTRY = re.compile(r"^([ABCD])\[(\d+)\]\[(\d+)\]$")


def slot_of(column):
    """Register column of the calculator's CSV ("v3", "v1.[31:16]", "v0.[15:8]") -> slot."""
    m = HEADER.match(column)
    if not m:
        raise ValueError(f"unexpected register column {column!r}")
    reg = int(m.group(1))
    if m.group(2) is None:
        return reg
    hi, lo = int(m.group(2)), int(m.group(3))
    bits = hi - lo + 1
    return reg * (32 // bits) + lo // bits


def parse(csv_text, matrix):
    """The calculator's --matrix-layout --csv -> [lane][slot] of [row, col] or None."""
    lines = [l for l in csv_text.splitlines() if l.strip()]
    head = next(i for i, l in enumerate(lines) if l.startswith("lane,"))
    cols = lines[head].split(",")[1:]
    slots = [slot_of(c) for c in cols]
    width = (max(slots) + 1) if slots else 0
    table = []
    for l in lines[head + 1:]:
        cells = l.split(",")
        lane = int(cells[0])
        if lane != len(table):
            raise ValueError(f"lanes out of order at {lane}")
        row = [None] * width
        for s, cell in zip(slots, cells[1:]):
            m = ENTRY.match(cell)
            if not m or m.group(1) != matrix:
                raise ValueError(f"unexpected entry {cell!r} for {matrix}")
            row[s] = [int(m.group(2)), int(m.group(3))]
        table.append(row)
    return table


def run_calculator(calc, python, arch, instr, wave, opsel, matrix):
    args = ["-a", arch, "-i", instr]
    if wave is not None:
        args += ["-w", str(wave)]
    args += ["-" + matrix, "--matrix-layout", "--csv"]
    if opsel is not None and matrix in "CD":
        args += ["--opsel", str(opsel)]
    out = subprocess.run([python, os.path.join(calc, "matrix_calculator.py")] + args, check=True,
                         capture_output=True, text=True).stdout
    return "python3 matrix_calculator.py " + " ".join(args), parse(out, matrix)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calculator", required=True, help="a clone of " + REPO)
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default=sys.executable, help="a Python with tabulate (default: this one)")
    a = ap.parse_args()
    calc = os.path.abspath(a.calculator)
    if not os.path.isfile(os.path.join(calc, "matrix_calculator.py")):
        print(f"--calculator {a.calculator}: no matrix_calculator.py there (clone {REPO})", file=sys.stderr)
        return 2
    commit = subprocess.run(["git", "-C", calc, "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    version = subprocess.run([a.python, os.path.join(calc, "matrix_calculator.py"), "-v"], check=True,
                             capture_output=True, text=True).stdout.strip()
    ours = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    atoms = []
    for name, sources in ATOMS.items():
        entries = []
        for arch, instr, wave, opsel in sources:
            e = {"architecture": arch, "instruction": instr, "wavefront": wave, "opsel": opsel, "operands": {}}
            for m in "ABCD":
                cmd, table = run_calculator(calc, a.python, arch, instr, wave, opsel, m)
                e["operands"][m] = {"command": cmd, "table": table}
            entries.append(e)
        atoms.append({"atom": name, "sources": entries})
    rec = {
        "schema": "flashprobe.amd_calculator/1",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": ours,
        "device": None,
        "evidence": "documented",
        "calculator": {"repository": REPO, "commit": commit, "version": version,
                       "run_in": "the calculator's repository root, with tabulate installed"},
        "slots": "slot = register * (32 / element bits) + low bit / element bits; null: no element",
        "atoms": atoms,
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(rec, f, separators=(",", ":"))
        f.write("\n")
    print(f"{a.out}: {len(atoms)} atoms, {sum(len(x['sources']) for x in atoms)} instruction tables x 4 operands "
          f"(calculator {commit[:12]}, {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
