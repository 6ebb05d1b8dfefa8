#!/usr/bin/python3
"""Build flashprobe's report from recorded JSON: PNG figures and one index.html.

Reads records only (never logs), from every *.json under --data (default reports/data), by schema:
  flashprobe.probe/1        layout diagrams per atom and operand (grid coloured by lane, labelled
                            T<lane>V<slot>, replicas marked), verdicts and formulas
  flashprobe.kernel_grid/1  accuracy: margin (error / bound) per kernel and dtype, error against Sk
  flashprobe.mutants/1      the mutation table (killed by which property / case)
  flashprobe.bench/1        performance: TFLOP/s (prefill) and GB/s (decode) against shape for every
                            kernel next to the vendor baselines, with the device ceilings drawn
  flashprobe.resources/1    registers, LDS/shared memory, scratch and occupancy per kernel and target
  flashprobe.calibration/1  the tolerance model's calibration (false-failure and kill rates)
  flashprobe.prop_soak/1    the property soak: cases and failures per kernel, dtype and property
  flashprobe.prop_throughput/1  property-run throughput: cases/s and where the time went
Every figure and table names the device, date and commit of the records it came from; simulated or
compiled-only results are labelled as such, never as measured.

Usage: build_report.py [--data DIR] [--out DIR]; exit 0 on success, 2 on bad usage.
"""
import argparse, collections, glob, html, json, os, re, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SECTIONS = ["Layouts", "Accuracy", "Property gate", "Mutants", "Performance", "Resources", "Tolerance calibration"]


def load_records(data):
    recs = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(data, "**", "*.json"), recursive=True)):
        try:
            with open(path) as f:
                j = json.load(f)
        except (OSError, ValueError) as e:
            print(f"skip {path}: {e}", file=sys.stderr)
            continue
        items = j if isinstance(j, list) else [j]
        for r in items:
            if isinstance(r, dict) and isinstance(r.get("schema"), str) and r["schema"].startswith("flashprobe."):
                r["_path"] = os.path.relpath(path, data)
                recs[r["schema"].split("/")[0].split(".", 1)[1]].append(r)
    return recs


def source_line(r):
    dev = r.get("device") or {}
    name = dev.get("name") if isinstance(dev, dict) else str(dev)
    parts = [f"device: {name or 'none (' + r.get('source', 'CPU') + ')'}"]
    if isinstance(dev, dict) and dev.get("driver_version"):
        parts.append(f"driver/runtime {dev.get('driver_version')}/{dev.get('runtime_version')}")
    parts.append(f"date: {r.get('date', '?')}")
    parts.append(f"commit: {r.get('commit', '?')}")
    if r.get("timing"):  # bench records: graph replay (kernel time) or events around each launch call
        parts.append(f"timing: {r['timing']}")
    if r.get("source"):
        parts.append(f"source: {r['source']}")
    parts.append(f"record: {r.get('_path', '?')}")
    return ", ".join(parts)


def find_layouts(obj, path=()):
    """Yield (name, {A,B,C}) for every MMA layout value inside a record."""
    if isinstance(obj, dict):
        if all(k in obj for k in ("A", "B", "C")) and all(isinstance(obj[k], dict) and "table" in obj[k] for k in "ABC"):
            yield "/".join(str(p) for p in path), obj
            return
        for k, v in obj.items():
            yield from find_layouts(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from find_layouts(v, path + (i,))


def draw_operand(ax, op, title):
    rows, cols, lanes, slots = op["rows"], op["cols"], op["lanes"], op["slots"]
    cells = collections.defaultdict(list)
    for i, e in enumerate(op["table"]):
        if e is None:
            continue
        cells[(e[0], e[1])].append((i // slots, i % slots))
    cmap = plt.get_cmap("tab20", 20)
    labels = rows * cols <= 1024  # beyond that (wgmma, 32x32 MFMA C) the colours carry the lanes
    fs = 6.0
    for (r, c), hs in cells.items():
        lane, slot = hs[0]
        ax.add_patch(plt.Rectangle((c, r), 1, 1, color=cmap(lane % 20), alpha=0.55, lw=0))
        if labels:
            label = f"T{lane:02d}\nV{slot}" + (f" ×{len(hs)}" if len(hs) > 1 else "")
            ax.text(c + 0.5, r + 0.5, label, ha="center", va="center", fontsize=fs, linespacing=0.9)
        elif len(hs) > 1:
            ax.text(c + 0.5, r + 0.5, "×", ha="center", va="center", fontsize=4)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_xticks(range(0, cols, max(1, cols // 8)))
    ax.set_yticks(range(0, rows, max(1, rows // 8)))
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ignored = sum(1 for e in op["table"] if e is None)
    ax.set_title(f"{title} ({rows}x{cols}, {lanes} lanes x {slots} slots" + (f", {ignored} ignored" if ignored else "") + ")",
                 fontsize=8)
    ax.set_aspect("equal")


def layout_figures(recs, out):
    # Atoms whose tables are identical (the 24 wmma shape x type x major combinations come in a few
    # layouts) share one figure; its caption names every atom drawn.
    groups = collections.OrderedDict()
    seen = set()
    for r in recs.get("probe", []):
        atoms = r.get("atoms") if isinstance(r.get("atoms"), list) else [r]
        for a in atoms:
            name = a.get("name") or a.get("atom") or "atom"
            for path, lay in find_layouts(a):
                key = (name, path, r.get("_path"))
                if key in seen or "expected" in path:
                    continue
                seen.add(key)
                src = a.get("source") or r.get("source") or "?"
                sig = (json.dumps({o: lay[o] for o in "ABC"}, sort_keys=True), path, src)
                g = groups.setdefault(sig, {"lay": lay, "path": path, "src": src, "names": [], "verdicts": set(),
                                            "sources": set()})
                g["names"].append(name)
                g["verdicts"].add(json.dumps(a.get("verdict") or a.get("verdicts") or "")[:200])
                g["sources"].add(source_line(r) + (", source: " + src if src != "?" and not r.get("source") else ""))
    items = []
    for g in groups.values():
        lay, name, path, src = g["lay"], g["names"][0], g["path"], g["src"]
        cols = sum(min(lay[o]["cols"], 32) for o in "ABC")
        rows = max(min(lay[o]["rows"], 32) for o in "ABC")
        fig, axes = plt.subplots(1, 3, figsize=(0.55 * cols + 3, 0.5 * rows + 1.8),
                                 gridspec_kw={"width_ratios": [lay[o]["cols"] for o in "ABC"]})
        for ax, op in zip(axes, "ABC"):
            draw_operand(ax, lay[op], {"A": "A (rows m, cols k)", "B": "B (rows k, cols n)", "C": "C/D (rows m, cols n)"}[op])
        more = f" (+{len(g['names']) - 1} atoms with this layout)" if len(g["names"]) > 1 else ""
        fig.suptitle(f"{name}{more} — {path or 'layout'} — {src}", fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        fn = f"layout_{len(items):03d}_{''.join(ch if ch.isalnum() else '_' for ch in name)[:60]}.png"
        fig.savefig(os.path.join(out, fn), dpi=110)
        plt.close(fig)
        names = ", ".join(g["names"])
        items.append((fn, f"{names}: {path}", "verdict: " + "; ".join(sorted(g["verdicts"]))[:400],
                      "; ".join(sorted(g["sources"]))[:600]))
    return items


def as_num(v):
    if isinstance(v, (int, float)):
        return float(v)
    return {"inf": float("inf"), "-inf": float("-inf")}.get(v, float("nan"))


def accuracy_figures(recs, out):
    items, rows = [], []
    per = collections.defaultdict(list)
    sk_err = collections.defaultdict(list)
    srcs = set()
    for r in recs.get("kernel_grid", []):
        srcs.add(source_line(r))
        for c in r.get("cases", []):
            o = c.get("o") or {}
            m = as_num(o.get("margin"))
            p = c.get("problem") or {}
            key = (c.get("kernel", "?"), p.get("dtype", "?"))
            if m == m:
                per[key].append(min(m, 5.0))
            e = as_num(o.get("error"))
            if e == e and p.get("sk") is not None:
                sk_err[key].append((p["sk"], e))
    if per:
        keys = sorted(per)
        fig, ax = plt.subplots(figsize=(max(8, 0.8 * len(keys)), 5.5))
        ax.boxplot([per[k] for k in keys], labels=[f"{k} {d}" for k, d in keys], showfliers=True)
        plt.setp(ax.get_xticklabels(), rotation=35, ha="right", fontsize=8)
        ax.axhline(1.0, color="red", ls="--", label="bound (margin = 1)")
        ax.set_ylabel("margin = error / bound (clipped at 5)")
        ax.set_xlabel("kernel, dtype")
        ax.set_title("Agreement with the double-precision oracle on the kernel grid")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out, "accuracy_margins.png"), dpi=110)
        plt.close(fig)
        items.append(("accuracy_margins.png", "Margins per kernel and dtype", "", "; ".join(sorted(srcs))))
        fig, ax = plt.subplots(figsize=(9, 5))
        for k in keys:
            pts = sorted(sk_err[k])
            if pts:
                i = keys.index(k)  # 20 colours x 3 markers: no two series look alike
                ax.scatter([max(1, s) for s, _ in pts], [max(e, 1e-9) for _, e in pts], s=12,
                           color=plt.cm.tab20(i % 20), marker="os^"[(i // 20) % 3] if len(keys) > 20 else "os^"[i % 3],
                           label=f"{k[0]} {k[1]}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("Sk (keys; 0 drawn at 1)")
        ax.set_ylabel("max |O - O_oracle| (0 drawn at 1e-9)")
        ax.set_title("Output error against the number of keys")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "accuracy_error_vs_sk.png"), dpi=110)
        plt.close(fig)
        items.append(("accuracy_error_vs_sk.png", "Error against Sk", "", "; ".join(sorted(srcs))))
        for k in keys:
            v = per[k]
            rows.append([k[0], k[1], len(v), f"{max(v):.3f}", f"{sorted(v)[len(v) // 2]:.3f}", sum(1 for x in v if x > 1)])
    return items, rows


def perf_figures(recs, out):
    items = []
    # A run is one device call: the records of one directory with one commit (flashprobe's bench
    # and the PyTorch baselines timed beside it). Each case is drawn from the newest run that timed
    # flashprobe on it, with only that run's baselines and ceilings: numbers from different calls
    # are never put side by side.
    import datetime
    def when(r):
        try:
            return datetime.datetime.strptime(str(r.get("date", "")), "%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            return None
    benches = recs.get("bench", [])
    is_fp = lambda r: any(x.get("impl") == "flashprobe" for x in r.get("results", []))
    anchors = [r for r in benches if is_fp(r)]
    def run_of(r):
        # Baselines without a usable commit (older GPU runs) join the flashprobe record of their
        # directory timed closest to them, within 15 minutes (the same device call).
        if is_fp(r) or r.get("commit") not in (None, "", "unknown"):
            return (os.path.dirname(r.get("_path", "")), r.get("commit", "?"))
        best = None
        for a in anchors:
            if os.path.dirname(a.get("_path", "")) != os.path.dirname(r.get("_path", "")) or not when(a) or not when(r):
                continue
            dt = abs((when(r) - when(a)).total_seconds())
            if dt <= 900 and (best is None or dt < best[0]):
                best = (dt, a)
        if best:
            return (os.path.dirname(best[1].get("_path", "")), best[1].get("commit", "?"))
        return (r.get("_path", ""), "?")
    runs = collections.defaultdict(lambda: {"results": [], "ceilings": {}, "srcs": set(), "date": "", "fp": set()})
    for r in benches:
        run = runs[run_of(r)]
        run["srcs"].add(source_line(r))
        run["ceilings"].update(r.get("ceilings") or {})
        run["date"] = max(run["date"], str(r.get("date", "")))
        for x in r.get("results", []):
            if "median_ms" in x:
                run["results"].append(x)
                if x.get("impl") == "flashprobe":
                    run["fp"].add(x["case"])
    newest = sorted(runs.values(), key=lambda g: g["date"], reverse=True)
    chosen = {}
    for g in newest:
        for x in g["results"]:
            c = x["case"]
            if c not in chosen and (c in g["fp"] or not any(c in h["fp"] for h in newest)):
                chosen[c] = g
    results, ceilings, srcs = [], {}, set()
    for g in reversed(newest):
        used = [x for x in g["results"] if chosen.get(x["case"]) is g]
        if used:
            results += used
            ceilings.update(g["ceilings"])
            srcs |= g["srcs"]
    if not results:
        return items, []
    impls = sorted({x["impl"] + ("/" + x["kernel"] if x["impl"] == "flashprobe" else "") for x in results})
    def impl_of(x):
        return x["impl"] + ("/" + x["kernel"] if x["impl"] == "flashprobe" else "")
    def parse(case):
        f = {}
        for tok in case.split(":", 1)[1].split("_"):
            for key in ("b", "hq", "sq", "sk", "d"):
                if tok.startswith(key) and tok[len(key):].isdigit():
                    f[key] = int(tok[len(key):])
        f["causal"] = "_causal" in case
        f["dtype"] = "bf16" if "_bf16" in case else "f16"
        return f
    table = []
    parsed = [(parse(x["case"]), x) for x in results]

    def figure(match, xkey, ykey, ceiling, xlabel, ylabel, title, fn, caption, row_label, fmt):
        fig, ax = plt.subplots(figsize=(8, 5))
        any_pts = False
        for im in impls:
            pts = sorted((f[xkey], x[ykey]) for f, x in parsed if impl_of(x) == im and match(f, x))
            if pts:
                any_pts = True
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=im)
                table.extend([im, row_label, s, fmt(v)] for s, v in pts)
        if not any_pts:
            plt.close(fig)
            return
        if ceiling[0] in ceilings:
            ax.axhline(ceilings[ceiling[0]], color="grey", ls="--", label=ceiling[1])
        ax.set_xscale("log", base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, fn), dpi=110)
        plt.close(fig)
        items.append((fn, caption, "", "; ".join(sorted(srcs))))

    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                kind = "causal" if causal else "non-causal"
                figure(lambda f, x: x["group"] == "prefill" and f["d"] == d and f["causal"] == causal and f["dtype"] == dt,
                       "sq", "tflops", ("bf16_gemm_tflops", "bf16 GEMM 8192³ (same run)"),
                       "sequence length S (batch·S = 16k tokens, H·D = 2048)", "TFLOP/s (4·B·H·S²·D, halved for causal)",
                       f"Prefill, D = {d}, {dt}, {kind}", f"perf_prefill_d{d}_{dt}_{'causal' if causal else 'full'}.png",
                       f"Prefill D={d} {dt} {kind}", f"prefill d{d} {dt} {'causal' if causal else 'full'}",
                       lambda t: f"{t:.1f}")
    for dt in ("f16", "bf16"):
        for b in (1, 8):
            figure(lambda f, x: x["group"] == "decode" and f.get("b") == b and f["dtype"] == dt,
                   "sk", "gbps", ("d2d_copy_gbps", "device copy (same run)"),
                   "keys Sk (Sq = 1, H = 32, D = 128)", "GB/s (Q + K + V + O bytes / time)",
                   f"Decode, B = {b}, {dt}", f"perf_decode_b{b}_{dt}.png", f"Decode B={b} {dt}",
                   f"decode B={b} {dt}", lambda g: f"{g:.0f} GB/s")
    return items, table


def resource_rows(recs):
    rows = []
    for r in recs.get("resources", []):
        src = r.get("source", "?")
        for k in r.get("kernels", []):
            rows.append([k.get("target"), (k.get("kernel") or "")[:70], k.get("vgpr"), k.get("agpr"), k.get("sgpr"),
                         k.get("lds_bytes"), k.get("scratch_bytes"), k.get("waves_per_simd"), src + f" ({r.get('date', '?')})"])
    return rows


def gate_rows(recs):
    """The soak's cases and failures per kernel x dtype, and the throughput ledgers' cases/s and shares."""
    soak, speed = [], []
    for r in recs.get("prop_soak", []):
        for row in r.get("rows", []):
            soak.append([row.get("kernel"), row.get("dtype"), row.get("property"), row.get("cases"), row.get("failures"),
                         row.get("cases_per_process_s"), source_line(r)])
    for r in recs.get("prop_throughput", []):
        size = re.search(r"max_size=(\d+)", r.get("rc_params", ""))
        for row in r.get("rows", []):
            t = row.get("seconds") or 0
            pct = (lambda k: f"{100 * row.get(k, 0) / t:.0f}%" if t else "?")
            speed.append([row.get("kernel"), row.get("property"), size.group(1) if size else "default", row.get("cases"),
                          f"{row.get('cases', 0) / t:.1f}" if t else "?", pct("inputs_s"), pct("kernel_s"),
                          pct("kernel_device_s"), pct("oracle_s"), source_line(r)])
    return soak, speed


def html_table(header, rows):
    h = "<tr>" + "".join(f"<th>{html.escape(str(x))}</th>" for x in header) + "</tr>"
    b = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in r) + "</tr>" for r in rows)
    return f"<table>{h}{b}</table>"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--data", default=os.path.join(here, "data"))
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "report"))
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print(f"build_report: --data {a.data}: not a directory", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    recs = load_records(a.data)
    body = [f"<h1>flashprobe report</h1><p>Built from {sum(len(v) for v in recs.values())} record(s) under "
            f"<code>{html.escape(a.data)}</code>. Every figure names the device, date and commit it came from.</p>"]
    summary = []

    def section(title, figs, extra=""):
        body.append(f"<h2 id='{title.lower().replace(' ', '-')}'>{title}</h2>")
        if not figs and not extra:
            body.append("<p><i>No records for this section.</i></p>")
        for fn, cap, note, src in figs:
            body.append(f"<figure><img src='{fn}' style='max-width:100%'><figcaption><b>{html.escape(cap)}</b> "
                        f"{html.escape(note)}<br><small>{html.escape(src)}</small></figcaption></figure>")
        body.append(extra)

    lay = layout_figures(recs, a.out)
    section("Layouts", lay)
    summary.append(f"layout diagrams: {len(lay)}")
    acc, acc_rows = accuracy_figures(recs, a.out)
    section("Accuracy", acc, html_table(["kernel", "dtype", "cases", "max margin", "median margin", "cases over bound"], acc_rows)
            if acc_rows else "")
    summary.append(f"accuracy: {len(acc_rows)} kernel/dtype rows")
    soak, speed = gate_rows(recs)
    section("Property gate", [], (html_table(["kernel", "dtype", "property", "cases", "failures", "cases per process-s", "source"], soak)
                                  if soak else "") +
            (html_table(["kernel", "property", "max size", "cases", "cases/s", "inputs", "kernel", "of it device", "oracle", "source"], speed)
             if speed else ""))
    summary.append(f"property gate: {len(soak)} soak rows, {len(speed)} throughput rows")
    mut_rows = []
    for r in recs.get("mutants", []):
        for m in r.get("mutants", []):
            mut_rows.append([m.get("name"), m.get("killed"), m.get("killed_by", ""), str(m.get("counterexample", ""))[:120],
                             source_line(r)])
    section("Mutants", [], html_table(["mutant", "killed", "killed by", "counterexample", "source"], mut_rows) if mut_rows else "")
    summary.append(f"mutants: {len(mut_rows)}")
    perf, perf_rows = perf_figures(recs, a.out)
    section("Performance", perf, html_table(["impl", "shape", "S / Sk", "rate"], perf_rows) if perf_rows else "")
    summary.append(f"performance figures: {len(perf)}")
    res = resource_rows(recs)
    section("Resources", [], html_table(["target", "kernel", "VGPR", "AGPR", "SGPR", "LDS B", "scratch B", "waves/SIMD", "source"], res)
            if res else "")
    summary.append(f"resource rows: {len(res)}")
    cal = recs.get("calibration", [])
    section("Tolerance calibration", [], "".join(f"<pre>{html.escape(json.dumps({k: v for k, v in r.items() if k != '_path' and not isinstance(v, list)}, indent=1)[:3000])}</pre><small>{html.escape(source_line(r))}</small>" for r in cal))
    summary.append(f"calibration records: {len(cal)}")
    css = "body{font-family:sans-serif;max-width:1200px;margin:auto} table{border-collapse:collapse;font-size:12px} td,th{border:1px solid #ccc;padding:2px 6px}"
    toc = "<p>" + " | ".join(f"<a href='#{s.lower().replace(' ', '-')}'>{s}</a>" for s in SECTIONS) + "</p>"
    with open(os.path.join(a.out, "index.html"), "w") as f:
        f.write(f"<!doctype html><html><head><meta charset='utf-8'><title>flashprobe report</title><style>{css}</style></head><body>"
                + body[0] + toc + "".join(body[1:]) + "</body></html>")
    print(f"report: {os.path.join(a.out, 'index.html')}")
    for s in summary:
        print("  " + s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
