"""The report's plots (matplotlib, imported only when there is something to draw): performance,
one run per figure, and accuracy against the oracle."""
import math

from .perf import complete_for, parse_case

_plt = None


def plt():
    global _plt
    if _plt is None:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as p
        _plt = p
    return _plt


def _series(run, group, dtype, label, metric, keep):
    pts = []
    for case in run.groups().get(group, ()):
        f = parse_case(case)
        t = run.times.get((label, case))
        if t is None or f["dtype"] != dtype or case not in run.work or not keep(f):
            continue
        flops, nbytes = run.work[case]
        x = f["sk"] if f["group"] == "decode" else f["sq"]
        pts.append((x, (flops if metric == "tflops" else nbytes) / (t * 1e-3) / (1e12 if metric == "tflops" else 1e9)))
    return sorted(pts)


def _draw_panels(run, panels, metric, ceiling, title, fn, out_dir):
    """panels: [(group, dtype, subtitle, keep(parsed case))]; every label the run timed there."""
    p = plt()
    nrow = math.ceil(len(panels) / 2)
    fig, axes = p.subplots(nrow, 2, figsize=(11, 3.6 * nrow), squeeze=False)
    labels = sorted(run.shipped) + sorted(run.variants) + sorted(run.baselines)
    styles = {lab: dict(ls="-" if lab in run.shipped else ":" if lab in run.variants else "--",
                        marker="os^vD<>"[i % 7], color=p.cm.tab10(i % 10)) for i, lab in enumerate(labels)}
    for ax, (group, dtype, sub, keep) in zip(axes.flat, panels):
        for lab in labels:
            pts = _series(run, group, dtype, lab, metric, keep)
            if pts:
                kind = "" if lab in run.shipped else " (variant)" if lab in run.variants else " (PyTorch)"
                ax.plot([a for a, _ in pts], [b for _, b in pts], label=lab + kind, ms=4, **styles[lab])
        if ceiling[0] in run.ceilings:
            ax.axhline(run.ceilings[ceiling[0]], color="grey", ls="-.", lw=1, label=ceiling[1])
        ax.set_xscale("log", base=2)
        ax.set_title(sub, fontsize=10)
        ax.set_xlabel("Sk (keys)" if metric == "gbps" else "S (batch x S = 16k tokens)")
        ax.set_ylabel("GB/s" if metric == "gbps" else "TFLOP/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(f"{out_dir}/{fn}", dpi=90)
    p.close(fig)


def perf_figures(runs, out_dir, caption):
    """One figure per run and family (prefill per dtype, decode) over the groups the run is
    complete for. Returns [(file, title, caption)] and [(run, group)] not drawn for being incomplete."""
    figs, skipped = [], []
    every = lambda f: True  # noqa: E731
    for n, run in enumerate(reversed(runs)):
        groups = sorted(run.groups())
        full = [g for g in groups if complete_for(run, g, runs)]
        skipped += [(run, g) for g in groups if g not in full]
        slug = run.run.split("/")[-1]
        pre = [g for g in full if g.startswith("prefill")]
        for dtype in ("f16", "bf16"):
            if any(_series(run, g, dtype, lab, "tflops", every) for g in pre for lab in run.shipped):
                fn = f"perf_{n}_{slug}_prefill_{dtype}.png"
                _draw_panels(run, [(g, dtype, f"{g}, {dtype}", every) for g in pre], "tflops",
                             ("bf16_gemm_tflops", "bf16 GEMM 8192^3 (this run)"), f"Prefill {dtype}: every kernel of {slug}",
                             fn, out_dir)
                figs.append((fn, f"Prefill, {dtype}", caption(run)))
        if "decode" in full:
            batches = sorted({parse_case(c)["b"] for c in run.groups()["decode"]})
            panels = [("decode", dt, f"decode, batch {b}, {dt}", lambda f, b=b: f["b"] == b)
                      for b in batches for dt in ("f16", "bf16")]
            fn = f"perf_{n}_{slug}_decode.png"
            _draw_panels(run, panels, "gbps", ("d2d_copy_gbps", "device copy (this run)"),
                         f"Decode (Sq = 1): every kernel of {slug}", fn, out_dir)
            figs.append((fn, "Decode (Sq = 1)", caption(run)))
    return figs, skipped


def accuracy_figures(grid_records, out_dir):
    """Margin (error / bound) per kernel and dtype over the newest grid record of each test."""
    per = {}
    for r in grid_records:
        for c in r.data.get("cases", []):
            o = c.get("o") or {}
            m = o.get("margin")
            dt = (c.get("problem") or {}).get("dtype", "?")
            if isinstance(m, (int, float)) and m == m:
                per.setdefault((c.get("kernel", "?"), dt), []).append(min(float(m), 5.0))
    if not per:
        return [], []
    p = plt()
    keys = sorted(per)
    fig, ax = p.subplots(figsize=(max(8, 0.7 * len(keys)), 4.5))
    ax.boxplot([per[k] for k in keys], showfliers=True)
    ax.set_xticks(range(1, len(keys) + 1))
    ax.set_xticklabels([f"{k} {d}" for k, d in keys], rotation=35, ha="right", fontsize=8)
    ax.axhline(1.0, color="red", ls="--", label="bound (margin = 1)")
    ax.set_ylabel("margin = error / bound (clipped at 5)")
    ax.set_title("Agreement with the double-precision oracle on the kernel grid")
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{out_dir}/accuracy_margins.png", dpi=90)
    p.close(fig)
    rows = [[k, d, len(v), f"{max(v):.3f}", f"{sorted(v)[len(v) // 2]:.3f}", sum(1 for x in v if x > 1)]
            for (k, d), v in sorted(per.items())]
    return ["accuracy_margins.png"], rows
