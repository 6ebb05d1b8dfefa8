"""The report's sections below the summary: every check's subjects, resources, calibration and the
records index. Tables only; the figures are in figures.py and layouts.py."""
import html

from .checks import anchor, check_of


def table(header, rows, cls=""):
    h = "".join(f"<th>{html.escape(str(x))}</th>" for x in header)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in r) + "</tr>" for r in rows)
    return f"<table class='{cls}'><tr>{h}</tr>{b}</table>" if cls else f"<table><tr>{h}</tr>{b}</table>"


def count(v):
    return "not recorded" if v is None else v


def check_details(blocks, titles):
    """One table per device block and check: each subject's counts, note and record; where the summary
    counts a subject's largest record (the soak), the newest one follows it, marked as not counted."""
    out = []
    for key, rows in blocks.items():
        for name, row in rows.items():
            ch = check_of(name)
            items = sorted([(i, "") for i in row.items] + [(i, "newest, not counted: ") for i in row.newest],
                           key=lambda x: (x[0].subject, x[1]))
            out.append(f"<h3 id='{anchor(name)}'>{html.escape(ch.title)} — {html.escape(titles.get(key, key))}</h3>")
            out.append(table(["subject", "run", "skipped", "failed", "note", "evidence", "record", "date", "commit"],
                             [[i.subject, count(i.run), count(i.skipped), count(i.failed), mark + i.note, i.label, i.record.path,
                               i.record.day, i.record.commit] for i, mark in items], "det"))
    return "".join(out)


def resources_table(recs):
    rows = []
    for r in recs.of("resources"):
        for k in r.data.get("kernels", []):
            if k.get("traps"):
                continue
            rows.append([k.get("target"), (k.get("kernel") or "")[:70], k.get("vgpr"), k.get("agpr"), k.get("sgpr"),
                         k.get("lds_bytes"), k.get("scratch_bytes"), k.get("waves_per_simd"),
                         k.get("occupancy_limited_by", ""), r.evidence, r.path])
    if not rows:
        return "<p class='none'>No resource records.</p>"
    return table(["target", "kernel", "VGPR", "AGPR", "SGPR", "LDS B", "scratch B", "waves/SIMD", "limited by",
                  "evidence", "record"], rows, "det")


def calibration_html(recs):
    out = []
    for r in recs.of("calibration"):
        d = r.data
        out.append(f"<p>{html.escape(r.path)} ({r.day}, {r.commit}, {r.evidence}): "
                   f"{d.get('defaults_correct_runs')} runs of {len(d.get('correct_kernels') or [])} correct simulated kernels at "
                   f"the default tolerance, {d.get('defaults_false_failures')} false failures.</p>")
        out.append(table(["planted bug", "what", "observable", "killed", "kill rate"],
                         [[b.get("name"), b.get("what", ""), b.get("observable"), b.get("killed"),
                           f"{100 * b.get('kill_rate', 0):.2f} %"] for b in d.get("planted_bugs") or []], "det"))
    return "".join(out) or "<p class='none'>No calibration records.</p>"


def index_html(entries):
    """The records index: what is in the tree and why, and where the rest is in git."""
    if not entries:
        return "<p class='none'>No records index (reports/data/INDEX.md).</p>"
    rows = []
    for e in entries:
        where = {"current": "in the tree (summarized)", "decision": "in the tree (cited by a decision)"}.get(
            e.status, f"git show {e.git}:reports/data/{e.run}/README.md")
        rows.append([e.run, e.date, e.commit, where, e.showed])
    return table(["run", "date", "commit", "where", "what it showed"], rows, "det")
