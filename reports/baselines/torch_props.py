#!/usr/bin/env python3
"""PyTorch's attention kernels property-tested through the flashprobe Python package (run on a GPU).

Subjects: scaled_dot_product_attention under each backend (flash, cuDNN, memory-efficient, math),
its backward under the flash, cuDNN and memory-efficient backends and FlexAttention's (sdpa-*-bwd,
flex-bwd: autograd's dQ, dK, dV of sum(dO * O) judged by flashprobe.testing.check_backward_kernel
against the gradient oracle, dO drawn from each case's seed), and FlexAttention compiled (its Triton kernels: a score_mod for ALiBi and soft-cap, a block mask for
causal masks, sliding windows and per-batch key lengths). Each subject and dtype is run through
flashprobe.testing.check_kernel: cases drawn by the C++ generator (through Hypothesis), every output
judged by the oracle, a failure shrunk, saved as NPY and re-checked with the flashprobe command. A
problem a backend cannot express or refuses ("No available kernel") is refused, counted, never
passed. Rows that see no key are a convention question (flashprobe: O = 0, LSE = -inf): the main
runs leave them out, a short run per subject ("empty-rows") checks them on their own.

Runs in chunks of cases with their own seeds until the target (default 1000 cases per forward subject
and dtype, 300 per backward one) or the run's time budget is reached; the record says which, with run
/ refused / failed (each generated case counted once: the subject's calls while Hypothesis shrinks a failure
are the row's calls_after_failure, never cases checked or refused). --jobs N runs every subject and dtype in its own process, N at once (the CPU side:
the oracle, Hypothesis, cuDNN's graph building and torch.compile are the cost, not the GPU), each until
the common deadline; --shards splits a slow subject's dtype over several processes (default: cuDNN,
Flex and Flex's backward in two each, one head dim each: Flex compiles per head dim); the shards of a
run are merged into one row with their seeds and head dims.

FlexAttention is compiled once per shape class, not per problem: its inputs are zero-padded into a
few classes (flex_shape: sequence lengths to multiples of 128, batch and kv heads to at least 2, the
GQA group to 1, 8, 16, ...) whose padding is masked or dropped, so the problem computed is the
case's; each run records how many graphs torch.compile built ("compiled_graphs"). The subject
"flex-exact" (only when named) calls it on each problem's own shapes. An exception FlexAttention
raises on a problem (a torch.compile crash) is a finding, not the end of the run: the problem JSON,
the exception and its traceback go into the run's "crashes" (and DIR/failures/crash-*/), the case
counts as neither passed nor refused, the run as failed, and the cases go on. A run's first crash is
shrunk (crash_shrink.py, --shrink-seconds) to the smallest problem that still raises the same
exception on the seed-0 inputs, saved as failures/crash-*/shrunk-case.json; --replay that file
runs the subject on it again (and shrinks it if it raises: flex_crash_083d889.json is the problem on
which FlexAttention crashed in torch.compile on an H100 at 083d889, replayed by the run-all stage).

  python3 reports/baselines/torch_props.py --out DIR [--cases 1000] [--bwd-cases 300] [--budget 500]
                                           [--subjects sdpa-flash,flex] [--jobs 12] [--shards flex=2]
                                           [--device cuda|cpu] [--max-failures 1]
  python3 reports/baselines/torch_props.py --replay DIR/failures/crash-.../shrunk-case.json --subjects flex

Writes DIR/torch_props.json (schema flashprobe.torch_props/1) and, per failure, DIR/failures/<run>/<case>/
(NPY files, the CLI's check.json); with --jobs, each process's log in DIR/logs/ and its row in
DIR/rows/. FLASHPROBE_EXE names the flashprobe command for the re-check.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

PROCESS_START = time.time()  # the stage's timeout counts from here, torch's import included
import traceback
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashprobe
from flashprobe import Case, Problem
from flashprobe.testing import (KernelCheckFailed, Unsupported, check_backward_kernel, check_kernel, run_backward_case,
                                run_case, save_backward_case, save_case, after_failure, upstream_gradient)

try:
    from torch.nn.attention.bias import causal_lower_right
except ImportError:  # pragma: no cover
    causal_lower_right = None

DEVICE = "cuda"
# SDPA warns on every call a backend refuses; the refusals are counted in the record instead.
warnings.filterwarnings("ignore", category=UserWarning)
TORCH_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def to_bhsd(x, layout):
    return x if layout == "bhsd" else x.transpose(1, 2)


def from_bhsd(o, layout):
    return o if layout == "bhsd" else o.transpose(1, 2)


def visibility(p):
    """[B, Sq, Sk] bool: which keys each query row sees, from the C++ problem's visible_range."""
    vis = np.zeros((p.batch, p.sq, p.sk), dtype=bool)
    for b in range(p.batch):
        for i in range(p.sq):
            lo, hi = p.visible_range(b, i)
            if lo <= hi:
                vis[b, i, max(lo, 0):hi + 1] = True
    return vis


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def needs_mask(p):
    return bool(p.window_left >= 0 or p.window_right >= 0 or p.seqlens_k or p.alibi_slopes)


# ---------------------------------------------------------------- SDPA
def sdpa_subject(backend):
    def kernel(p, q, k, v):
        if p.softcap:
            raise Unsupported("SDPA has no soft-cap")
        if p.sk == 0:
            raise Unsupported("SDPA needs at least one key")
        lay = p.tensor_layouts
        qb, kb, vb = to_bhsd(q, lay["q"]), to_bhsd(k, lay["k"]), to_bhsd(v, lay["v"])
        kw = dict(scale=p.effective_scale)
        if p.hq != p.hkv:
            kw["enable_gqa"] = True
        if needs_mask(p) or (p.causal == "bottom_right" and p.sq != p.sk and causal_lower_right is None):
            vis = torch.from_numpy(visibility(p)).to(DEVICE)[:, None]  # [B, 1, Sq, Sk]
            if p.alibi_slopes:
                i = torch.arange(p.sq, device=DEVICE)[:, None]
                j = torch.arange(p.sk, device=DEVICE)[None, :]
                diag = torch.tensor([p.diag_offset(b) for b in range(p.batch)], device=DEVICE)[:, None, None, None]
                slopes = torch.tensor(p.alibi_slopes, device=DEVICE, dtype=torch.float32)[None, :, None, None]
                bias = -slopes * (i + diag - j).abs().float()
                mask = torch.where(vis, bias, torch.tensor(float("-inf"), device=DEVICE)).to(qb.dtype)
            else:
                mask = vis
            kw["attn_mask"] = mask
        elif p.causal == "top_left":
            kw["is_causal"] = True
        elif p.causal == "bottom_right" and p.sq == p.sk:
            kw["is_causal"] = True  # the two diagonals coincide
        elif p.causal == "bottom_right" and p.hq == p.hkv:
            kw["attn_mask"] = causal_lower_right(p.sq, p.sk)  # the fused kernels' own lower-right mask
        elif p.causal == "bottom_right":
            kw["attn_mask"] = torch.from_numpy(visibility(p)).to(DEVICE)[:, None]
        try:
            with sdpa_kernel([backend]):
                o = F.scaled_dot_product_attention(qb, kb, vb, **kw)
        except RuntimeError as e:
            if "No available kernel" in str(e) or "not supported" in str(e).lower():
                raise Unsupported(str(e).splitlines()[0]) from None
            raise
        sync()
        return from_bhsd(o, lay["o"]), None

    return kernel


def sdpa_backward_subject(backend):
    """fn(p, q, k, v, do) -> (o, None, dq, dk, dv): the backend's forward (sdpa_subject's masks) and
    autograd's gradients of sum(do * o) on leaf copies of q, k, v (same strides)."""
    forward = sdpa_subject(backend)

    def kernel(p, q, k, v, do):
        leaves = [x.detach().clone().requires_grad_(True) for x in (q, k, v)]
        with torch.enable_grad():
            o, _ = forward(p, *leaves)
            try:
                with sdpa_kernel([backend]):
                    dq, dk, dv = torch.autograd.grad(o, leaves, grad_outputs=do.to(o.dtype))
            except RuntimeError as e:
                if "No available kernel" in str(e) or "not supported" in str(e).lower():
                    raise Unsupported("backward: " + str(e).splitlines()[0]) from None
                raise
        sync()
        return o.detach(), None, dq, dk, dv

    return kernel


# ---------------------------------------------------------------- FlexAttention
def round_up(n, m):
    return max(m, -(-n // m) * m)


def flex_shape(p, bucket=True):
    """The shapes FlexAttention is called with for problem p: (batch, hkv, group, sq, sk) padded so that
    few compiled graphs serve every problem (Flex.graph_class says which share one), or p's own.

    torch.compile(dynamic=True) still specialises on sizes 0 and 1, on a sequence length's
    divisibility by the 128-wide block and on the GQA group (a constant of the Triton kernel): Sq and
    Sk are padded to multiples of 128, batch and kv heads to at least 2, the group to 1 or the next of
    8, 16, ... The padding is masked (keys past each batch element's own count, batch elements with no
    key) or dropped from the output (query rows, heads and batch elements past the problem's), so the
    problem computed is p's."""
    g = p.hq // p.hkv
    if not bucket:
        return p.batch, p.hkv, g, p.sq, p.sk
    group = 1 if g == 1 else max(8, 1 << (g - 1).bit_length())
    return max(p.batch, 2), max(p.hkv, 2), group, round_up(p.sq, 128), round_up(p.sk, 128)


class Flex:
    """FlexAttention compiled once; the problem's parameters live in fixed-size tensors that the
    score_mod and mask_mod read, so that a new problem changes values, not the compiled graph, and the
    inputs are padded into a few shape classes (flex_shape) so that shapes do not recompile either."""

    MAX_BATCH = 64
    MAX_HEADS = 1024

    def __init__(self, bucket=True, lse=True):
        from torch.nn.attention import flex_attention as fa

        self.fa = fa
        self.bucket = bucket
        self.lse = lse  # False: O only (the CPU's compiled flex_attention returns no LSE)
        for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                     "accumulated_recompile_limit"):
            if hasattr(torch._dynamo.config, name):
                setattr(torch._dynamo.config, name, 512)
        if hasattr(torch._dynamo.config, "fail_on_recompile_limit_hit"):
            torch._dynamo.config.fail_on_recompile_limit_hit = True  # never fall back to eager
        f32 = dict(device=DEVICE, dtype=torch.float32)
        i32 = dict(device=DEVICE, dtype=torch.int32)
        self.cap = torch.zeros(1, **f32)
        self.scale = torch.ones(1, **f32)
        self.slopes = torch.zeros(self.MAX_HEADS, **f32)
        self.diag = torch.zeros(self.MAX_BATCH, **i32)
        self.keys = torch.zeros(self.MAX_BATCH, **i32)
        self.flags = torch.zeros(3, **i32)  # causal, window_left, window_right
        cap, scale, slopes, diag, keys, flags = self.cap, self.scale, self.slopes, self.diag, self.keys, self.flags

        # s = scale * q.k (flex_attention's own scale is 1: a Python float would be a guard, and every
        # new value a recompile), then the soft-cap, then ALiBi, as docs/attention-semantics.md orders them.
        def score_mod(score, b, h, q_idx, kv_idx):
            c = cap[0]
            s = score * scale[0]
            s = torch.where(c > 0, c * torch.tanh(s / torch.where(c > 0, c, 1.0)), s)
            return s - slopes[h] * (q_idx + diag[b] - kv_idx).abs()

        def mask_mod(b, h, q_idx, kv_idx):
            d = q_idx + diag[b]
            ok = kv_idx < keys[b]
            ok = ok & ((flags[0] == 0) | (kv_idx <= d))
            ok = ok & ((flags[1] < 0) | (kv_idx >= d - flags[1]))
            return ok & ((flags[2] < 0) | (kv_idx <= d + flags[2]))

        self.score_mod, self.mask_mod = score_mod, mask_mod
        # Dynamic shapes from the first call: a new Sq, Sk, batch or head count reuses the kernels.
        self.compiled = torch.compile(fa.flex_attention, dynamic=True)
        self.aux = getattr(fa, "AuxRequest", None)
        self.last_shape = None

    def graph_class(self, p):
        """The problems that share one compiled graph (PyTorch 2.11): besides dtype and head dims, Dynamo keeps
        the padded batch, kv-head and query-head counts as static sizes and specialises a sequence of one
        128-wide block (the 0/1 specialisation of the block mask's block counts); longer padded lengths are
        dynamic. Read from TORCH_LOGS=recompiles on the CPU; test_padded_flex_passes_the_oracle_with_few_graphs's
        12 problems are 7 classes and compiled 6 graphs on the CPU and on an H100 (the record at ada6362)."""
        B, hkv, g, sq, sk = flex_shape(p, self.bucket)
        return (p.dtype, p.d, p.dv, B, hkv, g) + ((sq <= 128, sk <= 128) if self.bucket else (sq, sk))

    def crash_key(self, p):
        """Which problems run_one skips once FlexAttention has crashed on p: those of p's graph class
        (graph_class, the one statement of what a compiled graph is specialised on), each of which would
        cost the same failed compilation; a problem of another class gets its own graph and is run."""
        return self.graph_class(p)

    def __call__(self, p, q, k, v):
        if p.sk == 0:
            raise Unsupported("FlexAttention needs at least one key")
        B, hkv, g, sq, sk = flex_shape(p, self.bucket)
        if B > self.MAX_BATCH or hkv * g > self.MAX_HEADS:
            raise Unsupported("more batch elements or heads than the parameter tensors hold")
        self.last_shape = dict(batch=B, hq=hkv * g, hkv=hkv, sq=sq, sk=sk)
        lay = p.tensor_layouts
        gp = p.hq // p.hkv
        # Zero-padded contiguous BHSD copies (one stride pattern: strides never cost a recompile); query
        # head h = kv * gp + m of the problem sits at kv * g + m.
        qp = q.new_zeros((B, hkv, g, sq, p.d))
        qp[:p.batch, :p.hkv, :gp, :p.sq] = to_bhsd(q, lay["q"]).reshape(p.batch, p.hkv, gp, p.sq, p.d)
        kp, vp = q.new_zeros((B, hkv, sk, p.d)), q.new_zeros((B, hkv, sk, p.dv))
        kp[:p.batch, :p.hkv, :p.sk] = to_bhsd(k, lay["k"])
        vp[:p.batch, :p.hkv, :p.sk] = to_bhsd(v, lay["v"])
        qp = qp.reshape(B, hkv * g, sq, p.d)
        self.cap[0] = p.softcap
        self.scale[0] = p.effective_scale
        self.slopes.zero_()
        if p.alibi_slopes:
            self.slopes[:hkv * g].view(hkv, g)[:p.hkv, :gp] = torch.tensor(p.alibi_slopes).view(p.hkv, gp)
        self.diag.zero_()
        self.keys.zero_()  # padded batch elements see no key
        self.diag[:p.batch] = torch.tensor([p.diag_offset(b) for b in range(p.batch)], dtype=torch.int32)
        self.keys[:p.batch] = torch.tensor(list(p.seqlens_k) or [p.sk] * p.batch, dtype=torch.int32)
        self.flags.copy_(torch.tensor([int(p.causal != "none"), p.window_left, p.window_right], dtype=torch.int32))
        block_mask = self.fa.create_block_mask(self.mask_mod, B, None, sq, sk, device=DEVICE)
        kw = dict(score_mod=self.score_mod, block_mask=block_mask, scale=1.0, enable_gqa=True)
        if not self.lse:
            o, lse = self.compiled(qp, kp, vp, **kw), None
        elif self.aux is not None:
            o, aux = self.compiled(qp, kp, vp, return_aux=self.aux(lse=True), **kw)
            lse = aux.lse
        else:
            o, lse = self.compiled(qp, kp, vp, return_lse=True, **kw)
        sync()
        # Back to the problem's batch, heads and rows.
        o = o.reshape(B, hkv, g, sq, p.dv)[:p.batch, :p.hkv, :gp, :p.sq].reshape(p.batch, p.hq, p.sq, p.dv)
        if lse is None:
            return from_bhsd(o, lay["o"]), None
        lse = lse.reshape(B, hkv, g, sq)[:p.batch, :p.hkv, :gp, :p.sq].reshape(p.batch, p.hq, p.sq)
        return from_bhsd(o, lay["o"]), lse.float()


def compiled_graphs():
    """Graphs torch.compile has compiled in this process so far (a recompile adds one)."""
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:  # noqa: BLE001 - a record field, not a reason to stop
        return None


_FLEX = {}


def flex_instance(bucket=True):
    """One Flex per padding rule for every run, so that its compiled kernels are reused (on the CPU, O only:
    the CPU's compiled flex_attention returns no LSE)."""
    if bucket not in _FLEX:
        _FLEX[bucket] = Flex(bucket, lse=DEVICE == "cuda")
    return _FLEX[bucket]


def flex_backward_subject():
    """FlexAttention's backward (its compiled Triton backward): the Flex forward on leaf copies of q, k, v,
    then autograd's gradients of sum(do * o); the LSE it returns is checked too."""
    flex = flex_instance()

    def crash_key(p):
        return ("backward",) + flex.crash_key(p)

    def kernel(p, q, k, v, do):
        leaves = [x.detach().clone().requires_grad_(True) for x in (q, k, v)]
        with torch.enable_grad():
            o, lse = flex(p, *leaves)
            dq, dk, dv = torch.autograd.grad(o, leaves, grad_outputs=do.to(o.dtype))
        sync()
        return o.detach(), None if lse is None else lse.detach(), dq, dk, dv

    kernel.crash_key = crash_key
    return kernel


# ---------------------------------------------------------------- subjects
# What each subject's API can state. SDPA has no soft-cap; the flash and cuDNN backends take no mask
# tensor (causal masks only); ALiBi through SDPA is an additive mask in the inputs' dtype, which
# rounds the bias (bf16 holds 300 to within 2), so it goes to the f32 runs only.
def plain(dtype):
    return dict(head_dims=[64, 128], windows=False, seqlens=False, alibi=False, softcap=False)


def masked(dtype):
    return dict(head_dims=[64, 128], softcap=False, alibi=dtype == "f32")


def flex_domain(dtype):
    return dict(head_dims=[64, 128])


# Not run unless named: FlexAttention on each problem's own shapes (a compile for nearly every new shape
# class; the padded "flex" computes the same problems).
NOT_BY_DEFAULT = ("flex-exact",)
# Subjects whose exception on a problem (not Unsupported) is a finding recorded with the problem, after
# which the run goes on: a crash inside torch.compile says nothing about the other problems.
CRASH_IS_FINDING = ("flex", "flex-exact", "flex-bwd")
MAX_SAVED_CRASHES = 20
# A subject that has crashed this often without one case returning since the run began is stopped: each
# crash of a compiled subject can cost a compilation, and the rest of the run would be crashes too.
CRASHES_BEFORE_STOP = 8


def subjects():
    """name -> (kernel factory, dtypes, constraints(dtype), check_lse, weight of its time share)"""
    return {
        "sdpa-flash": (lambda: sdpa_subject(SDPBackend.FLASH_ATTENTION), ["f16", "bf16"], plain, False, 1),
        # cuDNN builds a graph for every new shape: about 0.1 s a case on an H100 (bf9c27a, 083d889).
        "sdpa-cudnn": (lambda: sdpa_subject(SDPBackend.CUDNN_ATTENTION), ["f16", "bf16"], plain, False, 2),
        "sdpa-efficient": (lambda: sdpa_subject(SDPBackend.EFFICIENT_ATTENTION), ["f16", "bf16", "f32"], masked, False,
                           1),
        "sdpa-math": (lambda: sdpa_subject(SDPBackend.MATH), ["f16", "bf16", "f32"], masked, False, 1),
        # Compiling FlexAttention's kernels (per dtype and head dim) takes most of its share.
        "flex": (flex_instance, ["f16", "bf16"], flex_domain, True, 3),
        # The backward (is_backward: the name ends in -bwd): the forward's domain; no LSE from autograd.
        "sdpa-flash-bwd": (lambda: sdpa_backward_subject(SDPBackend.FLASH_ATTENTION), ["f16", "bf16"], plain, False, 1),
        "sdpa-cudnn-bwd": (lambda: sdpa_backward_subject(SDPBackend.CUDNN_ATTENTION), ["f16", "bf16"], plain, False, 1),
        "sdpa-efficient-bwd": (lambda: sdpa_backward_subject(SDPBackend.EFFICIENT_ATTENTION), ["f16", "bf16", "f32"],
                               masked, False, 1),
        "flex-bwd": (flex_backward_subject, ["f16", "bf16"], flex_domain, True, 3),
        "flex-exact": (lambda: flex_instance(bucket=False), ["f16", "bf16"], flex_domain, True, 3),
    }


def is_backward(name):
    return name.endswith("-bwd")


def cli_recheck(command):
    exe = os.environ.get("FLASHPROBE_EXE")
    if not exe or not os.path.isfile(exe):
        return {"ran": False, "why": "no flashprobe command (FLASHPROBE_EXE)"}
    args = command.split()[1:]
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    out = {"ran": True, "command": command, "exit_code": r.returncode, "stdout": r.stdout.strip()[-2000:],
           "stderr": r.stderr.strip()[-2000:]}
    rec = args[args.index("--json") + 1]
    if os.path.isfile(rec):
        with open(rec) as f:
            j = json.load(f)
        out["pass"] = j.get("pass")
        out["reason"] = j.get("reason")
    return out



def run_one(name, kernel, dtype, constraints, check_lse, target, budget, out_dir, empty_rows, seed0, tag=None,
            progress=None, shrink_seconds=0.0, max_failures=1):
    """Chunks of check_kernel until `target` cases ran or `budget` seconds passed. progress(row), if given,
    is called after every chunk (a worker's partial row survives it being stopped); shrink_seconds > 0
    shrinks the run's first crash (crash_shrink.py) into a replayable case. A failing chunk's case is shrunk
    and recorded in "failures" ("failure": the first); the run stops at its max_failures-th failure, or
    goes on to its target (still failed) with a larger max_failures."""
    from hypothesis import HealthCheck, settings

    tag = tag or f"{name}-{dtype}"
    row = {"subject": name, "backward": is_backward(name), "dtype": dtype, "target": target, "checked": 0, "refused": 0, "failed": 0,
           "unbounded": 0,  # backward: cases judged NOT BOUNDED (neither passed nor failed; BACKWARD_TOLERANCE.md)
           "calls_after_failure": 0,  # the subject's calls shrinking a failure: not cases (KernelReport's)
           "seconds": 0.0, "chunks": 0, "worst_margin": 0.0, "worst_case": None, "lse_checked": check_lse,
           "empty_rows": empty_rows, "stopped_by": None, "failure": None, "failures": []}
    supports = (lambda p: p.empty_rows > 0) if empty_rows else (lambda p: p.empty_rows == 0)
    reasons = row["refusals"] = {}
    inner = kernel
    crash_is_finding = name in CRASH_IS_FINDING
    row["crashed"], row["crashes"], row["compiled_graphs"] = 0, [], None
    graphs0 = compiled_graphs()
    in_chunk = {"crashed": 0, "stopped": 0}
    returned = {"n": 0}
    crash_key = getattr(inner, "crash_key", None)
    crashed_keys = set()
    row["skipped_after_crash"] = 0

    def kernel(p, q, k, v, *do):  # noqa: F811 - the subject, with its refusals tallied by reason
        # Past a chunk's first failure the calls are Hypothesis shrinking it: check_kernel counts none of
        # them as a case (its calls_after_failure), so neither do the tallies here (a crash is still recorded).
        generated = not after_failure()
        if row["crashed"] >= CRASHES_BEFORE_STOP and returned["n"] == 0:
            in_chunk["stopped"] += generated  # not called: the run stops after this chunk (refused, not counted)
            raise Unsupported("stopped: the subject crashed on every case")
        if crash_key is not None and crash_key(p) in crashed_keys:
            # Its compiled graph crashed on an earlier problem (recorded): neither called nor counted as
            # checked or refused, counted apart.
            in_chunk["stopped"] += generated
            row["skipped_after_crash"] += generated
            raise Unsupported("its graph crashed on an earlier problem")
        try:
            out = inner(p, q, k, v, *do)
            returned["n"] += 1
            return out
        except Unsupported as e:
            key = str(e)[:160]
            if generated:
                reasons[key] = reasons.get(key, 0) + 1
            raise
        except Exception as e:  # noqa: BLE001
            if not crash_is_finding:
                raise  # a failure of the case: shrunk and reported by check_kernel
            # A finding about the subject on this problem, recorded; the case is neither passed nor refused.
            row["crashed"] += 1
            in_chunk["crashed"] += generated
            if crash_key is not None:
                crashed_keys.add(crash_key(p))
            if len(row["crashes"]) < MAX_SAVED_CRASHES:
                crash = record_crash(tag, dtype, p, e, getattr(inner, "last_shape", None), out_dir, len(row["crashes"]))
                if len(row["crashes"]) == 0 and shrink_seconds > 0:
                    crash["shrunk"] = shrink_crash(name, inner, p, e, out_dir, crash["saved"], shrink_seconds)
                row["crashes"].append(crash)
            row["failed"] = 1  # a crash is a finding about the subject: the run is not a clean pass
            print(f"{name}/{dtype}: crashed on {p.id}: {type(e).__name__}: {str(e).splitlines()[0][:300]}",
                  flush=True)
            if progress is not None:  # the crash survives the worker being stopped mid-chunk
                progress(dict(row, stopped_by="in progress"))
            raise Unsupported("crashed (recorded)") from None

    t0 = time.perf_counter()
    chunk = 50
    while row["checked"] < target:
        spent = time.perf_counter() - t0
        if spent > budget:
            row["stopped_by"] = "time budget"
            break
        n = min(chunk, target - row["checked"])
        if row["checked"] >= chunk:  # from the rate so far (compilation included), a chunk that fits what is left
            n = max(5, min(n, int((budget - spent) * row["checked"] / spent)))
        seed = seed0 + row["chunks"]
        row["chunks"] += 1
        check = check_backward_kernel if is_backward(name) else check_kernel
        in_chunk["crashed"] = in_chunk["stopped"] = 0
        try:
            r = check(kernel, max_examples=n, seed=seed, array="torch", device=DEVICE, check_lse=check_lse,
                      supports=supports, dtypes=[dtype], name=f"{name}/{dtype}",
                      settings=settings(suppress_health_check=[HealthCheck.filter_too_much]),
                      failure_dir=os.path.join(out_dir, "failures", tag), **constraints)
        except KernelCheckFailed as e:
            rep = getattr(e, "report", None)
            if rep is not None:
                row["checked"] += rep.checked
                row["unbounded"] += rep.unbounded
                row["calls_after_failure"] += rep.calls_after_failure
                # check_kernel counted crashes (and the cases not run after the stop) as refusals
                row["refused"] += rep.refused - in_chunk["crashed"] - in_chunk["stopped"]
            if e.case is None:  # every case of the chunk refused or crashed: nothing judged, nothing passed
                row["stopped_by"] = "every case crashed" if in_chunk["crashed"] and row["refused"] == 0 else \
                    "every case refused"
                if row["crashed"] >= CRASHES_BEFORE_STOP and returned["n"] == 0:
                    row["stopped_by"] = f"crashed on every case ({row['crashed']} crashes, none returned)"
                break
            row["failed"] = 1
            f = {"message": str(e), "case": json.loads(e.case.to_json()) if e.case else None,
                 "summary": e.result.summary if e.result else None,
                 "error": None if e.error is None else f"{type(e.error).__name__}: {e.error}",
                 "chunk_seed": seed}
            line = [ln for ln in str(e).splitlines() if "re-check with:" in ln]
            if line:
                f["cli"] = cli_recheck(line[0].split("re-check with: ", 1)[1])
                # Each run (and shard) saves under its own folder: two subjects that shrink to one case keep both.
                f["saved"] = os.path.join("failures", tag, e.case.id)

            row["failures"].append(f)
            row["failure"] = row["failure"] or f
            print(str(e), flush=True)
            if len(row["failures"]) >= max_failures:
                row["stopped_by"] = "failure"
                break
            row["seconds"] = round(time.perf_counter() - t0, 1)
            if progress is not None:
                progress(dict(row, stopped_by="in progress"))
            continue
        row["checked"] += r.checked
        row["unbounded"] += r.unbounded
        row["refused"] += r.refused - in_chunk["crashed"] - in_chunk["stopped"]
        if r.worst_margin >= row["worst_margin"]:
            row["worst_margin"], row["worst_case"] = r.worst_margin, r.worst_case
        row["seconds"] = round(time.perf_counter() - t0, 1)
        if progress is not None:
            progress(dict(row, stopped_by="in progress"))
    else:
        row["stopped_by"] = "target"
    row["seconds"] = round(time.perf_counter() - t0, 1)
    graphs1 = compiled_graphs()
    row["compiled_graphs"] = None if graphs0 is None or graphs1 is None else graphs1 - graphs0
    if row["crashed"]:
        row["failed"] = 1  # a crash is a finding about the subject: the run is not a clean pass
    print(row_line(row), flush=True)
    return row


def row_line(row):
    return (f"{row['subject']:15s} {row['dtype']:5s} {'empty-rows' if row.get('empty_rows') else 'main':10s} "
            f"checked {row.get('checked', 0):5d}  refused {row.get('refused', 0):5d}  failed {row.get('failed', 0)}  "
            f"crashed {row.get('crashed', 0)}" + (f" (then {row['skipped_after_crash']} skipped)" if row.get("skipped_after_crash") else "")
            + (f"  not bounded {row['unbounded']}" if row.get("unbounded") else "")
            + (f"  calls after the failure {row['calls_after_failure']}" if row.get("calls_after_failure") else "")
            + f"  worst margin {row.get('worst_margin', 0.0):.2f}  "
            f"{row.get('seconds', 0.0):.0f} s  compiled graphs {row.get('compiled_graphs')}  ({row.get('stopped_by')})"
            + (f"  [{row['shards']} shards]" if row.get("shards", 1) > 1 else ""))


def record_crash(tag, dtype, p, e, shape, out_dir, n):
    """A subject's exception on problem p as a finding: the problem JSON, the exception and its traceback,
    saved under out_dir/failures/crash-<tag>-<n>/ (problem.json, error.txt); tag names the subject and
    dtype (and the shard)."""
    d = os.path.join(out_dir, "failures", f"crash-{tag}-{n}")
    os.makedirs(d, exist_ok=True)
    problem = json.loads(p.to_json())
    with open(os.path.join(d, "problem.json"), "w") as f:
        json.dump(problem, f, indent=1)
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    with open(os.path.join(d, "error.txt"), "w") as f:
        f.write(f"{tag} ({dtype}) on {p.id}, called with shape {shape}\n\n{tb}")
    return {"problem": problem, "id": p.id, "subject_shape": shape, "error": f"{type(e).__name__}: {str(e)[:2000]}",
            "traceback_tail": tb[-3000:], "saved": d}


def subject_call(name, kernel, case):
    """The subject on a case's inputs (and, for a backward, the case's upstream gradient)."""
    args = case.arrays("torch", DEVICE)
    if is_backward(name):
        args = (*args, upstream_gradient(case, "torch", DEVICE))
    return kernel(case.problem, *args)


def shrink_crash(name, kernel, p, e, out_dir, saved, seconds):
    """The crash of `kernel` on p shrunk to a minimal problem that still raises the same exception type on
    the seed-0 normal inputs (crash_shrink.py), saved as saved/shrunk-case.json with the command that
    replays it. First checks that p itself raises again on those inputs."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from crash_shrink import shrink

    kind = type(e).__name__

    def fails(pp):
        try:
            subject_call(name, kernel, Case(pp, 0, "normal"))
        except Unsupported:
            return False
        except Exception as e2:  # noqa: BLE001
            return type(e2).__name__ == kind
        return False

    t0 = time.perf_counter()
    if not fails(p):
        return {"reproduced": False, "seconds": round(time.perf_counter() - t0, 1),
                "why": "the problem did not raise again on the seed-0 normal inputs (not shrunk)"}
    res = shrink(fails, p, seconds=max(1.0, seconds - (time.perf_counter() - t0)))
    case = Case(Problem.from_json(json.dumps(res["problem"])), 0, "normal")
    path = os.path.join(saved, "shrunk-case.json")
    with open(path, "w") as f:
        f.write(case.to_json() + "\n")
    rel = os.path.relpath(path, out_dir)
    res.update(reproduced=True, case=json.loads(case.to_json()), error_type=kind, saved=rel,
               replay=f"python3 reports/baselines/torch_props.py --replay <the record's folder>/{rel} --subjects {name}")
    print(f"{name}: crash shrunk to {res['id']} ({', '.join(res['steps']) or 'no simpler problem'}; "
          f"{res['attempts']} attempts, {res['seconds']} s, {res['stopped_by']}): {rel}", flush=True)
    return res


def environment():
    env = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(),
           "gpu": torch.cuda.get_device_name(0) if DEVICE == "cuda" else None, "device": DEVICE,
           "flashprobe": flashprobe.build_info()}
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = None
    import hypothesis
    env["hypothesis"] = hypothesis.__version__
    return env


# ---------------------------------------------------------------- jobs
def plan(names, a):
    """The runs, in the order the record lists them: (subject, dtype, empty_rows, target, seed, weight)
    for every subject and dtype, then an empty-rows run per forward subject on its first dtype. The seeds
    do not depend on --jobs or --shards (a shard draws its chunk seeds after the one before it)."""
    table = subjects()
    runs = []
    pairs = [(n, dt) for n in names for dt in table[n][1]]
    for idx, (n, dt) in enumerate(pairs):
        runs.append(dict(subject=n, dtype=dt, empty_rows=False, target=a.bwd_cases if is_backward(n) else a.cases,
                         seed=a.seed + 1000 * idx, weight=table[n][4]))
    for idx, n in enumerate(n for n in names if not is_backward(n)):
        runs.append(dict(subject=n, dtype=table[n][1][0], empty_rows=True, target=a.empty_cases,
                         seed=a.seed + 50000 + idx, weight=0.1))
    return runs


def parse_shards(text):
    out = {}
    for part in filter(None, (text or "").split(",")):
        name, _, n = part.partition("=")
        if name not in subjects() or not n.isdigit() or int(n) < 1:
            raise ValueError(f"--shards '{part}' is not SUBJECT=N with a known subject and N >= 1")
        out[name] = int(n)
    return out


def split(run, shards):
    """A run as `shards` jobs: the target split, each shard's chunk seeds 100 apart. Where the subject's
    domain has at least as many head dims as shards, each shard takes its share of them (head_dims[s::n]):
    FlexAttention compiles per head dim, so a shard compiles only its own graphs."""
    n = shards if not run["empty_rows"] else 1
    dims = subjects()[run["subject"]][2](run["dtype"]).get("head_dims") or []
    return [dict(run, target=run["target"] // n + (1 if s < run["target"] % n else 0), seed=run["seed"] + 100 * s,
                 shard=s, shards=n, **({"head_dims": dims[s::n]} if n > 1 and len(dims) >= n else {}))
            for s in range(n)]


def job_tag(job):
    return f"{job['subject']}-{job['dtype']}{'-empty' if job['empty_rows'] else ''}" + \
        (f"-s{job['shard']}" if job.get("shards", 1) > 1 else "")


def run_job(job, out_dir, budget, shrink_seconds, progress=None, max_failures=1):
    """One run (or shard) in this process: the subject made, then run_one; a subject that cannot start or
    an exception of the harness is a failed row, not the end of the record."""
    factory, _, domain_of, check_lse, _ = subjects()[job["subject"]]
    base = {"subject": job["subject"], "backward": is_backward(job["subject"]), "dtype": job["dtype"],
            "empty_rows": job["empty_rows"], "target": job["target"], "checked": 0, "failed": 1}
    try:
        kernel = factory()
    except Exception as e:  # noqa: BLE001 - a subject that cannot start is a finding, not a crash
        return dict(base, stopped_by="could not start", failure={"error": repr(e)})
    try:
        constraints = dict(domain_of(job["dtype"]), **({"head_dims": job["head_dims"]} if job.get("head_dims") else {}))
        return run_one(job["subject"], kernel, job["dtype"], constraints, check_lse, job["target"], budget,
                       out_dir, job["empty_rows"], job["seed"], tag=job_tag(job), progress=progress,
                       shrink_seconds=shrink_seconds, max_failures=max_failures)
    except Exception:  # noqa: BLE001
        return dict(base, stopped_by="crashed", failure={"error": traceback.format_exc()[-3000:]})


def worker(a):
    """--worker JOB: one job in this process until --deadline (epoch seconds); its row (partial after every
    chunk) in OUT/rows/<tag>.json."""
    job = json.loads(a.worker)
    path = os.path.join(a.out, "rows", job_tag(job) + ".json")

    def save(row):
        with open(path + ".tmp", "w") as f:
            json.dump(dict(row, shard=job.get("shard", 0), shards=job.get("shards", 1), seed=job["seed"],
                           head_dims=job.get("head_dims")), f)
        os.replace(path + ".tmp", path)

    row = run_job(job, a.out, a.deadline - time.time(), a.shrink_seconds, progress=save, max_failures=a.max_failures)
    save(row)
    return 0


def merge(rows):
    """The shards of one run as one row: counts summed, the worst margin and the first failure kept, the
    slowest shard's seconds, stopped by target only when every shard reached it."""
    if len(rows) == 1:
        return rows[0]
    out = dict(rows[0])
    for k in ("target", "checked", "refused", "crashed", "skipped_after_crash", "chunks", "unbounded",
              "calls_after_failure"):
        out[k] = sum(r.get(k) or 0 for r in rows)
    out["failed"] = max(r.get("failed") or 0 for r in rows)
    out["seconds"] = max(r.get("seconds") or 0 for r in rows)
    worst = max(rows, key=lambda r: r.get("worst_margin") or 0)
    out["worst_margin"], out["worst_case"] = worst.get("worst_margin", 0.0), worst.get("worst_case")
    out["failure"] = next((r["failure"] for r in rows if r.get("failure")), None)
    out["failures"] = [f for r in rows for f in r.get("failures") or ([r["failure"]] if r.get("failure") else [])]
    out["crashes"] = [c for r in rows for c in r.get("crashes") or []][:MAX_SAVED_CRASHES]
    graphs = [r.get("compiled_graphs") for r in rows]
    out["compiled_graphs"] = None if None in graphs else sum(graphs)
    refusals = {}
    for r in rows:
        for k, v in (r.get("refusals") or {}).items():
            refusals[k] = refusals.get(k, 0) + v
    out["refusals"] = refusals
    stops = [r.get("stopped_by") for r in rows]
    out["stopped_by"] = "target" if all(s == "target" for s in stops) else next(s for s in stops if s != "target")
    out["shards"], out["seeds"] = len(rows), [r.get("seed") for r in rows]
    out["shard_head_dims"] = [r.get("head_dims") for r in rows]
    for k in ("shard", "seed", "head_dims"):
        out.pop(k, None)
    return out


def run_parallel(jobs, a, deadline):
    """Every job in its own process (--worker), at most a.jobs at once, the heaviest first; a job still
    running at the deadline is stopped and keeps the cases its last chunk reported. Returns the rows by
    job tag."""
    import subprocess

    os.makedirs(os.path.join(a.out, "rows"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    env = dict(os.environ)
    # Processes share the CPU: few threads each (torch's own pool, Inductor's compile workers).
    per = str(max(1, (os.cpu_count() or 1) // max(1, a.jobs)))
    env.setdefault("OMP_NUM_THREADS", per)
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", per)
    env.setdefault("PYTHONUNBUFFERED", "1")
    pending = sorted(jobs, key=lambda j: (j["empty_rows"], -j["weight"]))
    running, rows = {}, {}

    def collect(tag, proc, log, why=None):
        log.close()
        path = os.path.join(a.out, "rows", tag + ".json")
        row = None
        if os.path.isfile(path):
            with open(path) as f:
                row = json.load(f)
        job = running[tag][2]
        if row is None:
            with open(log.name) as f:
                tail = f.read()[-3000:]
            # Stopped at the deadline before its first chunk ended: nothing judged, nothing failed. A
            # worker that exited on its own without a row failed.
            row = {"subject": job["subject"], "backward": is_backward(job["subject"]), "dtype": job["dtype"],
                   "empty_rows": job["empty_rows"], "target": job["target"], "checked": 0, "failed": 0 if why else 1,
                   "seed": job["seed"], "stopped_by": (why + ", before its first chunk ended") if why else
                   f"worker exited {proc.returncode} without a row", "failure": None if why else {"error": tail}}
        elif why and row.get("stopped_by") == "in progress":
            row["stopped_by"] = why
        elif row.get("stopped_by") == "in progress":
            row["stopped_by"] = f"worker exited {proc.returncode} mid-run"
            row["failed"] = 1
        rows[tag] = row
        print(row_line(row) + f"  <{tag}>", flush=True)

    while pending or running:
        while pending and len(running) < a.jobs and time.time() < deadline - 20:
            job = pending.pop(0)
            tag = job_tag(job)
            log = open(os.path.join(a.out, "logs", tag + ".txt"), "w")
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(job), "--out", a.out,
                   "--device", a.device, "--deadline", str(deadline), "--shrink-seconds", str(a.shrink_seconds),
                   "--max-failures", str(a.max_failures)]
            running[tag] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log, job)
        for tag in [t for t, (p, _, _) in running.items() if p.poll() is not None]:
            collect(tag, running[tag][0], running[tag][1])
            del running[tag]
        if time.time() > deadline + a.grace:
            for tag, (p, log, _) in list(running.items()):
                p.kill()
                p.wait()
                collect(tag, p, log, "stopped at the deadline")
                del running[tag]
        if pending and time.time() >= deadline - 20 and len(running) < a.jobs:
            for job in pending:
                rows[job_tag(job)] = {"subject": job["subject"], "backward": is_backward(job["subject"]),
                                      "dtype": job["dtype"], "empty_rows": job["empty_rows"], "target": job["target"],
                                      "checked": 0, "failed": 0, "seed": job["seed"], "stopped_by": "no time left"}
                print(row_line(rows[job_tag(job)]) + f"  <{job_tag(job)}>", flush=True)
            pending = []
        time.sleep(0.2)
    return rows


def replay_cases(a):
    """--replay CASE.json: each named subject on that case (a shrunk crash's shrunk-case.json, a recorded
    crash's problem, or any case JSON a failure printed): passed, failed (the oracle's summary; the subject's
    outputs saved as NPY files in OUT/replay-<subject>/<case>/), refused or raised (the exception). A subject whose crashes are findings (FlexAttention) and that raises again has
    the crash shrunk (--shrink-seconds) into OUT/replay-<subject>/shrunk-case.json. Writes OUT/replay.json;
    exit 0 when every subject passed or refused."""
    with open(a.replay) as f:
        text = f.read()
    case = Case.from_json(text)
    table = subjects()
    os.makedirs(a.out, exist_ok=True)
    rec = {"schema": "flashprobe.torch_props_replay/1", "evidence": "measured",
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "case": json.loads(case.to_json()),
           "source": a.replay, "environment": environment(), "subjects": []}
    rc = 0
    for name in [s for s in a.subjects.split(",") if s]:
        factory, _, _, check_lse, _ = table[name]
        row = {"subject": name}
        t0 = time.perf_counter()
        try:
            kernel = factory()
            if is_backward(name):
                res, out = run_backward_case(kernel, case, array="torch", device=DEVICE, check_lse=check_lse)
            else:
                res, o, lse = run_case(kernel, case, array="torch", device=DEVICE, check_lse=check_lse)
            row.update(verdict="passed" if res.passed else "failed", summary=res.summary)
            rc |= 0 if res.passed else 1
            if not res.passed:  # the subject's outputs beside the case, as a run's failure saves them
                saved = os.path.join(f"replay-{name}", case.id)
                if is_backward(name):
                    save_backward_case(os.path.join(a.out, saved), case, out)
                else:
                    save_case(os.path.join(a.out, saved), case, o, lse if check_lse else None)
                row["saved"] = saved
        except Unsupported as e:
            row.update(verdict="refused", why=str(e))
        except Exception as e:  # noqa: BLE001 - the crash being replayed
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            row.update(verdict="raised", error=f"{type(e).__name__}: {str(e)[:2000]}", traceback_tail=tb[-3000:])
            rc = 1
            if name in CRASH_IS_FINDING and a.shrink_seconds > 0:
                saved = os.path.join(a.out, f"replay-{name}")
                os.makedirs(saved, exist_ok=True)
                row["shrunk"] = shrink_crash(name, kernel, case.problem, e, a.out, saved, a.shrink_seconds)
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rec["subjects"].append(row)
        print(f"replay {name} on {case.id}: {row['verdict']}: {row.get('summary') or row.get('why') or row.get('error', '')[:300]}",
              flush=True)
        with open(os.path.join(a.out, "replay.json"), "w") as f:
            json.dump(rec, f, indent=1)
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=".")
    ap.add_argument("--cases", type=int, default=1000, help="target cases per forward subject and dtype")
    ap.add_argument("--bwd-cases", type=int, default=300, help="target cases per backward subject and dtype")
    ap.add_argument("--empty-cases", type=int, default=100, help="cases of the empty-rows run per subject")
    ap.add_argument("--budget", type=float, default=500, help="seconds for everything")
    ap.add_argument("--subjects", default=",".join(n for n in subjects() if n not in NOT_BY_DEFAULT))
    ap.add_argument("--device", default="cuda", help="where the subjects run (cpu: FlexAttention's CPU path, tests)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="runs at once, each in its own process (1: one after another here)")
    ap.add_argument("--shards", default="sdpa-cudnn=2,flex=2,flex-bwd=2",
                    help="SUBJECT=N,...: with --jobs > 1, each dtype of SUBJECT as N processes sharing its target")
    ap.add_argument("--max-failures", type=int, default=1,
                    help="failures a run shrinks and records before it stops (more: it goes on to its target past "
                         "a known finding, still failed)")
    ap.add_argument("--shrink-seconds", type=float, default=60.0,
                    help="time to shrink a run's first crash into a replayable case (0: none)")
    ap.add_argument("--grace", type=float, default=10.0, help=argparse.SUPPRESS)
    ap.add_argument("--replay", help="a case JSON to run each named subject on (see replay_cases)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    a = ap.parse_args()
    global DEVICE
    DEVICE = a.device
    names = [s for s in a.subjects.split(",") if s]
    table = subjects()
    unknown = [n for n in names if n not in table]
    if unknown:
        print(f"unknown subjects {unknown} (known: {', '.join(table)})", file=sys.stderr)
        return 2
    try:
        shards = parse_shards(a.shards) if a.jobs > 1 else {}
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if a.jobs < 1:
        print(f"--jobs {a.jobs} is not at least 1", file=sys.stderr)
        return 2
    if a.max_failures < 1:
        print(f"--max-failures {a.max_failures} is not at least 1", file=sys.stderr)
        return 2
    if a.replay:
        return replay_cases(a)
    if a.worker:
        return worker(a)
    os.makedirs(a.out, exist_ok=True)
    t_start = time.perf_counter() - (time.time() - PROCESS_START)
    runs = plan(names, a)
    record = {"schema": "flashprobe.torch_props/1", "evidence": "measured", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "host": platform.node(), "environment": environment(), "target_cases": a.cases,
              "target_cases_backward": a.bwd_cases, "budget_s": a.budget, "seed": a.seed, "jobs": a.jobs,
              "shards": shards, "command": " ".join(sys.argv), "runs": []}
    print(json.dumps(record["environment"]), flush=True)

    def write():
        with open(os.path.join(a.out, "torch_props.json"), "w") as f:
            json.dump(record, f, indent=1)

    if a.jobs > 1:
        jobs = [j for r in runs for j in split(r, shards.get(r["subject"], 1))]
        rows = run_parallel(jobs, a, PROCESS_START + a.budget - a.grace - 5)
        for r in runs:
            mine = [rows[job_tag(j)] for j in split(r, shards.get(r["subject"], 1)) if job_tag(j) in rows]
            if mine:
                record["runs"].append(merge(mine))
        shutil.rmtree(os.path.join(a.out, "rows"), ignore_errors=True)  # merged into the record
    else:
        # One after another: every main run gets its weight's share of what is left, the empty-rows runs
        # a tenth of one each.
        for idx, r in enumerate(runs):
            left = a.budget - (time.perf_counter() - t_start)
            if r["empty_rows"] and left < 5:
                record["runs"].append({"subject": r["subject"], "dtype": r["dtype"], "empty_rows": True, "checked": 0,
                                       "stopped_by": "no time left"})
                continue
            share = left * r["weight"] / sum(x["weight"] for x in runs[idx:])
            record["runs"].append(run_job(dict(r, shard=0, shards=1), a.out, share, a.shrink_seconds,
                                          max_failures=a.max_failures))
            write()
    record["seconds"] = round(time.perf_counter() - t_start, 1)
    main_runs = [r for r in record["runs"] if not r.get("empty_rows")]
    record["summary"] = {"runs": len(main_runs), "cases_checked": sum(r.get("checked", 0) for r in main_runs),
                         "runs_at_target": sum(r.get("stopped_by") == "target" for r in main_runs),
                         "runs_failed": sum(bool(r.get("failed")) for r in main_runs),
                         "crashes_shrunk": sum(1 for r in record["runs"] for c in r.get("crashes") or []
                                               if (c.get("shrunk") or {}).get("reproduced"))}
    write()
    print(json.dumps(record["summary"]), flush=True)
    return 0 if record["summary"]["runs_failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
