"""The attention cases run in the emulator, per target: every shipped head dim and dtype, several
workgroups, GQA, sliding windows, both causal alignments, and sequence lengths that are not tile
multiples (the kernel's tiles: 64 query rows per block on gfx11/gfx12, 64 keys per tile, 32 at
d = 256). Small, because the emulator is slow (emulator/README.md)."""


def P(sq, sk, d, dtype="f16", batch=1, hq=1, hkv=1, **kw):
    return dict(batch=batch, hq=hq, hkv=hkv, sq=sq, sk=sk, d=d, dtype=dtype, **kw)


GFX11 = [
    dict(name="d64_f16_sq64_sk64", problem=P(64, 64, 64), why="one block, one key tile"),
    dict(name="d64_f16_sq32_sk40", problem=P(32, 40, 64), why="partial row block and key tile"),
    dict(name="d64_f16_causal_gqa_sq64_sk80", problem=P(64, 80, 64, hq=2, hkv=1, causal="bottom_right"),
         why="causal (bottom-right) GQA, partial last key tile"),
    dict(name="d64_bf16_sq70_sk50_top_left_b2", problem=P(70, 50, 64, "bf16", batch=2, hq=2, hkv=1, causal="top_left"),
         why="bf16, causal top-left, two batches, two row blocks"),
    dict(name="d64_f16_window_sq96_sk96", problem=P(96, 96, 64, window_left=17, window_right=5),
         why="sliding window, two row blocks, two key tiles"),
    dict(name="d128_f16_sq48_sk72", problem=P(48, 72, 128), why="d = 128, tails in both"),
    dict(name="d128_bf16_causal_sq80_sk64", problem=P(80, 64, 128, "bf16", causal="bottom_right"),
         why="d = 128 bf16, causal bottom-right, two row blocks"),
    dict(name="d256_f16_sq20_sk40", problem=P(20, 40, 256), why="d = 256 (32-key tiles), tails"),
    dict(name="d256_bf16_sq16_sk33", problem=P(16, 33, 256, "bf16", hq=2, hkv=2), why="d = 256 bf16, two heads"),
    dict(name="d80_f16_sq33_sk47", problem=P(33, 47, 80), why="d = 80"),
    dict(name="d96_bf16_sq17_sk65", problem=P(17, 65, 96, "bf16"), why="d = 96, key tail of 1"),
]

CASES = {
    "gfx1100": GFX11,
    "gfx1201": GFX11,
    # CDNA: 128 query rows per block; the launcher refuses d = 80 (MFMA 32x32x8 needs d % 32 == 0).
    "gfx942": [c for c in GFX11 if c["problem"]["d"] != 80],
}

# The backward cases (--backward): the AMD forward, then mma_bwd_amd (d = dv in {64, 128}; 64-key
# dK/dV blocks and 64-row dQ blocks; query tiles of 64 rows at d = 64, 32 at d = 128), both through the
# oracle's check. Small: each runs four kernels in the emulator.
BWD_GFX11 = [
    dict(name="bwd_d64_f16_sq64_sk64", problem=P(64, 64, 64), why="one block of each kernel"),
    dict(name="bwd_d64_bf16_causal_gqa_sq70_sk80", problem=P(70, 80, 64, "bf16", hq=2, hkv=1, causal="bottom_right"),
         why="bf16, causal bottom-right, GQA (dK/dV summed over 2 query heads), tails in rows and keys"),
    dict(name="bwd_d64_f16_top_left_b2_sq40_sk72", problem=P(40, 72, 64, batch=2, hq=2, hkv=2, causal="top_left"),
         why="causal top-left (keys no row sees: dK = dV = 0), two batches, two heads"),
    dict(name="bwd_d128_f16_sq48_sk72", problem=P(48, 72, 128), why="d = 128 (32-row query tiles), tails"),
    dict(name="bwd_d128_bf16_causal_gqa_sq40_sk40", problem=P(40, 40, 128, "bf16", hq=2, hkv=1, causal="bottom_right"),
         why="d = 128 bf16, causal, GQA"),
    dict(name="bwd_d64_f16_window_softcap_sq96_sk96", problem=P(96, 96, 64, window_left=17, window_right=5, softcap=2.0),
         why="sliding window 17/5 and soft-cap 2 (scores saturate: its tanh derivative matters in dS), two blocks of each kernel"),
]
BWD_CASES = {"gfx1100": BWD_GFX11, "gfx1201": BWD_GFX11}

# The atoms whose experiment kernels run per target (the emulator runs RDNA in wave32 only), and the
# code object that holds them (cmake CODE_OBJECT units of probes/amd/CMakeLists.txt).
_G11 = ["GFX11_WMMA_16x16x16_F32F16_W32", "GFX11_WMMA_16x16x16_F32BF16_W32"]
_G11_OPSEL = [f"GFX11_WMMA_16x16x16_{t}_W32_OPSEL_{h}" for t in ("F16F16", "BF16BF16") for h in ("LO", "HI")]
_8BIT = ("E4M3", "E4M3E5M2", "E5M2E4M3", "E5M2")  # fp8/bf8 pairings, A's type first
_G12_8BIT = [f"GFX12_WMMA_16x16x16_F32{t}_W32" for t in _8BIT]
_MFMA16_8BIT = [f"CDNA_MFMA_16x16x32_F32{t}" for t in _8BIT]
_MFMA32_8BIT = [f"CDNA_MFMA_32x32x16_F32{t}" for t in _8BIT]
PROBE_ATOMS = {
    "gfx1100": ("probes_amd_rdna3.rdna3_wmma.co", _G11 + _G11_OPSEL),
    "gfx1201": ("probes_amd_rdna4.rdna4_wmma.co", ["GFX12_WMMA_16x16x16_F32F16_W32", "GFX12_WMMA_16x16x16_F32BF16_W32"]
                + _G12_8BIT),
    "gfx942": ("probes_amd_cdna.cdna_mfma.co", ["CDNA_MFMA_16x16x16_F32F16", "CDNA_MFMA_16x16x16_F32BF16_1K",
                                                 "CDNA_MFMA_32x32x8_F32F16", "CDNA_MFMA_32x32x8_F32BF16_1K"]
               + _MFMA16_8BIT + _MFMA32_8BIT),
}

# Where the emulator is known to differ from AMD's documents (its authors' notes, and what a run here
# showed): a failure of these atoms is recorded with this note. It still counts as failed: the
# emulated check did not pass, and the project keeps the documented layout (AMD's calculator agrees
# with it slot for slot, reports/data/amd-documented/2026-11-26-calculator/).
_OPSEL = "emulator limit: its RDNA3 WMMA ignores OPSEL (the high-half forms come out in the low halves)"
_OPSEL_LO = ("emulator limit: its RDNA3 WMMA ignores OPSEL and does not pass C through in the half OPSEL "
             "leaves alone (the low halves it computes are as declared)")
_MFMA32 = ("emulator limit: its MFMA 32x32 output map differs from AMD's documentation and calculator: it writes "
           "row 16*(lane/32) + slot where AMD's row is 8*(slot/4) + 4*(lane/32) + slot%4 (the diagnosis locates "
           "every D slot)")
_FNUZ = ("emulator limit: it reads gfx942's FNUZ fp8/bf8 operands as OCP e4m3/e5m2 (bias one lower: every value "
         "doubled, so D = 4*A*B + C; the diagnosis shows it)")
_FP8_AS_F16 = ("emulator limit: its RDNA4 WMMA converts each fp8/bf8 byte with its f16 conversion (a tiny f16 "
               "denormal), so A*B vanishes and D = C (the diagnosis shows it)")
EMULATOR_LIMITS = {**{a: _FP8_AS_F16 for a in _G12_8BIT},
                   **{a: _FNUZ for a in _MFMA16_8BIT},
                   **{a: _OPSEL if a.endswith("_HI") else _OPSEL_LO for a in _G11_OPSEL},
                   "CDNA_MFMA_32x32x8_F32F16": _MFMA32, "CDNA_MFMA_32x32x8_F32BF16_1K": _MFMA32,
                   **{a: _MFMA32 + "; and " + _FNUZ[len("emulator limit: "):] for a in _MFMA32_8BIT}}
