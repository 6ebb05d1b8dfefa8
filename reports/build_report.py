#!/usr/bin/python3
"""Build flashprobe's report from records: one index.html with a one-screen summary at the top, then
the details (every check's subjects, layouts, accuracy, performance, resources, calibration, the
records index), figures beside it.

Reads the current runs of --data (those its INDEX.md marks current; a folder without INDEX.md is
read whole as one run, as the main job's own records on a GPU machine) and the files given with
--with (this machine's simulations). reports/README.md describes the records, the summary contract and the index.

Usage: build_report.py [--data DIR] [--out DIR] [--with FILE_OR_DIR ...]
Exit 0 when the report was written, 2 on bad usage or an unreadable index.
"""
import argparse, html, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fpreport import backward, details, figures, index, layouts, perf, records, summary  # noqa: E402

CSS = """
body{font-family:sans-serif;font-size:13px;max-width:1260px;margin:8px auto;color:#222}
h1{font-size:18px;margin:4px 0} h2{font-size:16px;margin:18px 0 6px;border-bottom:1px solid #ccc}
h3{font-size:14px;margin:12px 0 4px}
#summary h2{font-size:14px;margin:4px 0 2px;border:0}
details.older summary{cursor:pointer} details.older summary h2{display:inline} .tot-bad{color:#a00000}
#summary .lead{margin:0;color:#444}
table{border-collapse:collapse;font-size:12px;margin:2px 0}
td,th{border:1px solid #ccc;padding:1px 5px;vertical-align:top}
th{background:#f3f3f3;font-weight:600}
table.sum td.num{white-space:nowrap} td.prov{white-space:nowrap;color:#555}
td.note{font-size:11px} td.note div{max-width:430px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis} .cols td.note div{max-width:150px}
td.bad{background:#fde0e0;color:#a00000;font-weight:600}
td.none{color:#777;font-style:italic}
table.perf td{white-space:nowrap;text-align:right} table.perf td small{color:#666;font-size:10px}
table.perf td.up{background:#e4f4e4} table.perf td.down{background:#f8efe0}
p.foot{font-size:11px;color:#555;margin:2px 0 2px}
.cols{display:flex;gap:14px;align-items:flex-start} .cols>div{flex:1 1 0;min-width:0}
.cols td.prov{white-space:normal;min-width:90px} .cols td.what{min-width:190px}
td.prov1{white-space:nowrap;color:#555} table.amd td.what{white-space:nowrap} .cols>div.amd{flex:0 0 auto}
figure{margin:10px 0;border-top:1px solid #eee;padding-top:6px} figcaption{font-size:12px}
table.det{font-size:11px;display:block;overflow-x:auto;max-width:100%} table.fx{font-size:11px;margin:4px 0}
nav a{margin-right:10px}
#summary-end{border:0;border-top:4px solid rgb(40,90,160);margin:4px 0 0}
"""


def device_title(recs, key):
    """NVIDIA H100 80GB HBM3 (sm_90), driver 580.159.04, CUDA 13.0, from the newest record of the folder;
    the runtime from the newest record that states one (PyTorch's bench records name the device
    without it), the driver from the newest run with a device-info.txt (a call may skip the info
    stage)."""
    best = best_rt = best_drv = None
    for rs in recs.by_kind.values():
        for r in rs:
            if r.device_key == key and isinstance(r.data.get("device"), dict) and r.data["device"].get("name"):
                if best is None or r.date > best.date:
                    best = r
                if recs.driver(r.run) and (best_drv is None or r.date > best_drv.date):
                    best_drv = r
                rt = r.data["device"].get("runtime_version")
                if isinstance(rt, int) and rt > 0 and (best_rt is None or r.date > best_rt.date):
                    best_rt = r
    if best is None:
        return {"amd": "AMD (no AMD GPU: documented, simulated, compiled, emulated)", "cpu": "CPU (the oracle)"}.get(key, key)
    d = best.data["device"]
    parts = [f"{d['name']} ({d.get('arch', '?')})"]
    drv = recs.driver(best_drv.run) if best_drv is not None else ""
    if drv:
        parts.append(f"driver {drv}")
    if best_rt is not None:
        rd = best_rt.data["device"]
        rt = rd["runtime_version"]
        parts.append(f"CUDA {rt // 1000}.{rt % 1000 // 10}" if rd.get("vendor") == "nvidia" else f"runtime {rt}")
    return ", ".join(parts)


def run_caption(recs):
    def caption(run):
        title = device_title(recs, run.device_key)
        kinds = f"kernels: {', '.join(sorted(run.shipped))}" + (f"; variants: {', '.join(sorted(run.variants))}" if run.variants else "")
        ceil = ", ".join(f"{k} {v:.0f}" for k, v in sorted(run.ceilings.items()))
        drv = recs.driver(run.run)
        return (f"record: {run.run} — {title}" + ("" if drv and drv in title else f", driver {drv or 'not recorded'}")
                + f"; commit {', '.join(run.commits) or '?'}; {run.date[:16].replace('T', ' ')} UTC; {run.timing or '?'} timing; "
                f"{kinds}; baselines (same run): {', '.join(sorted(run.baselines))}; ceilings: {ceil or 'none'}")
    return caption


def record_caption(recs):
    def caption(r):
        drv = recs.driver(r.run)
        return (f"record: {r.path} — {r.device_name or 'no GPU'}" + (f", driver {drv}" if drv else "")
                + f"; commit {r.commit or '?'}; {r.date[:16].replace('T', ' ')} UTC; evidence: {r.evidence}")
    return caption


def main():
    t0 = time.time()
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(here, "data"))
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "report"))
    ap.add_argument("--with", dest="extra", action="append", default=[],
                    help="more records (files or folders) made on this machine, e.g. the probe engine's simulations")
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print(f"build_report: --data {a.data}: not a directory", file=sys.stderr)
        return 2
    for x in a.extra:
        if not os.path.exists(x):
            print(f"build_report: --with {x}: no such file or directory", file=sys.stderr)
            return 2
    entries, allow, prefix = [], None, ""
    idx = os.path.join(a.data, "INDEX.md")
    if os.path.isfile(idx):
        try:
            entries = index.parse(idx)
        except index.IndexError_ as e:
            print(f"build_report: {e}", file=sys.stderr)
            return 2
        allow = index.allow_current(entries)
    else:
        prefix = "this-machine/main-job"  # a folder without an index is one run (the main job's own records)
    os.makedirs(a.out, exist_ok=True)
    recs = records.load([a.data], allow=allow, prefix=prefix)
    local = records.load(a.extra, prefix="local/this-build") if a.extra else records.Records()
    for k, v in local.by_kind.items():
        for r in v:
            recs.add(r)
    recs.problems += local.problems

    blocks, problems = summary.collect(recs)
    titles = {k: device_title(recs, k) for k in blocks}
    runs = perf.bench_runs(recs.of("bench"))
    perf_keys = sorted({r.device_key for r in runs})

    # The first screen.
    nruns = len({r.run for rs in recs.by_kind.values() for r in rs})
    top = [f"<section id='summary'><h1>flashprobe: what the current records show</h1>"
           f"<p class='lead'>{len(recs)} records of {nruns} run{'s' if nruns != 1 else ''} (reports/data/INDEX.md lists them and the history in git). "
           "Red: failed, skipped, or not recorded. Every number links to its details.</p>"]
    nvidia = [k for k in blocks if k not in ("amd", "cpu", "local")]
    # The device with the newest records shows its table; an older one folds into one line with its
    # totals (red when anything failed or was skipped), so the summary still ends above the fold.
    newest = max(nvidia, key=lambda k: max((i.record.date for row in blocks[k].values() for i in row.items), default=""),
                 default=None)
    for key in nvidia:
        evs = {e for row in blocks[key].values() for e in row.evidence}
        label = f" ({evs.pop()})" if len(evs) == 1 else ""
        title = f"{html.escape(titles[key])}: kernels and atoms against the oracle{label}"
        if key == newest:
            top.append(f"<h2>{title}</h2>" + summary.check_table(blocks[key], evidence=not label))
        else:
            short = html.escape(titles[key].split(',')[0])  # one line: the device and its totals
            top.append(f"<details class='older'><summary><h2>{short}, older records: {summary.totals_text(blocks[key])}</h2></summary>"
                       f"<h2>{title}</h2>"
                       + summary.check_table(blocks[key], evidence=not label) + "</details>")
    for key in perf_keys:
        table = perf.ratio_table(runs, key)
        if table.cells:  # a device with no same-run baseline has no speed table to show
            top.append(f"<h2>Speed on {html.escape(device_title(recs, key).split(',')[0])}: same-run time ratios</h2>"
                       + summary.perf_table(table))
    top.append("<div class='cols'>")
    if "amd" in blocks:
        top.append("<div class='amd'><h2>AMD, by evidence</h2>" + summary.amd_table(blocks["amd"], recs.of("amd_calculator")) + "</div>")
    if "cpu" in blocks:
        evs = {e for row in blocks["cpu"].values() for e in row.evidence}
        top.append(f"<div><h2>The oracle's tolerance model on the CPU ({', '.join(sorted(evs))})</h2>"
                   + summary.check_table(blocks["cpu"], evidence=False) + "</div>")
    top.append("</div>")
    nav = ["summary", "details", "layouts", "accuracy", "performance", "backward", "resources", "calibration", "records"]
    top.append("<nav>" + "".join(f"<a href='#{s}'>{s}</a>" for s in nav[1:]) + "</nav>"
               "<hr id='summary-end'></section>")

    # The details.
    body = ["<h2 id='details'>Every check, by subject</h2>", details.check_details(blocks, titles)]
    lay_html, nlay = layouts.layout_section(recs, a.out, record_caption(recs))
    body += ["<h2 id='layouts'>Layouts</h2><p>Drawn from the probe records' tables; the formulas are those the "
             "probe derived, as recorded.</p>", lay_html or "<p class='none'>No probe records.</p>"]
    grid_newest = {}
    for r in recs.of("kernel_grid"):
        t = r.data.get("test")
        if t not in grid_newest or r.date > grid_newest[t].date:
            grid_newest[t] = r
    acc_figs, acc_rows = figures.accuracy_figures(list(grid_newest.values()), a.out)
    body.append("<h2 id='accuracy'>Accuracy against the oracle</h2>")
    for fn in acc_figs:
        srcs = "; ".join(record_caption(recs)(r) for r in sorted(grid_newest.values(), key=lambda r: r.path))
        body.append(f"<figure><img src='{fn}' style='max-width:100%'><figcaption>Margin per kernel and dtype, "
                    f"the newest grid record of each test. <small>{html.escape(srcs)}</small></figcaption></figure>")
    if acc_rows:
        body.append(details.table(["kernel", "dtype", "cases", "max margin", "median margin", "cases over bound"], acc_rows))
    body.append("<h2 id='performance'>Performance</h2>")
    perf_figs, not_drawn = figures.perf_figures(runs, a.out, run_caption(recs))
    for key in perf_keys:
        body.append(summary.perf_table(perf.ratio_table(runs, key)))
    for fn, title, cap in perf_figs:
        body.append(f"<figure><img src='{fn}' style='max-width:100%'><figcaption><b>{html.escape(title)}</b> "
                    f"<small>{html.escape(cap)}</small></figcaption></figure>")
    if not_drawn:
        body.append("<p>Not drawn (the run did not time the dispatcher's kernel for the group; its same-run ratios are in "
                    "the table): " + html.escape("; ".join(f"{r.run.split('/')[-1]}: {g} ({', '.join(sorted(r.kernels_in(g, r.shipped)))})"
                                                         for r, g in not_drawn)) + "</p>")
    body.append(backward.backward_section(recs))
    body += ["<h2 id='resources'>Resources</h2>", details.resources_table(recs),
             "<h2 id='calibration'>Tolerance calibration</h2>", details.calibration_html(recs),
             "<h2 id='records'>Records</h2>", details.index_html(entries)]
    if recs.problems or problems:
        body.append("<h3>Records that could not be read</h3>" + details.table(
            ["record", "why"], [[p, w] for p, w in recs.problems] + [[p, ""] for p in problems]))
    with open(os.path.join(a.out, "index.html"), "w") as f:
        f.write(f"<!doctype html><html><head><meta charset='utf-8'><title>flashprobe report</title><style>{CSS}</style>"
                f"</head><body>{''.join(top)}{''.join(body)}</body></html>")

    print(f"report: {os.path.join(a.out, 'index.html')} ({len(recs)} records, {nlay} layout diagrams, "
          f"{len(perf_figs) + len(acc_figs)} figures, {time.time() - t0:.1f} s)")
    for key, rows in blocks.items():
        for name, row in rows.items():
            flag = "RED " if row.bad else ""
            beside = "; ".join(x for x in (summary.newest_text(row), summary.code_text(row)) if x)
            print(f"  {flag}{key}: {summary.check_of(name).title}: {summary.counts_text(row)} ({summary.provenance(row)})"
                  + (f"; {beside}" if beside else ""))
    for p in [f"{p}: {w}" for p, w in recs.problems] + problems:
        print(f"  unreadable: {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
