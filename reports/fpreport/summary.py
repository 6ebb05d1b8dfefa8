"""The report's first screen: per device, every check's run / skipped / failed from the newest
record of each subject (the soak: the largest, with the newest beside it; counted_per_subject); the
performance ratios of the newest runs; AMD by evidence.

Rows are red where something failed, was skipped, or a count was not recorded ("skips not
recorded"), so that nothing missing reads as a pass; grey where no record exists yet.
"""
import collections, dataclasses, html

from .checks import CHECKS, anchor, check_of, items_of
from .records import EVIDENCE


@dataclasses.dataclass
class Row:
    check: str
    items: list          # the Items counted: one record per subject (counted_per_subject)
    newest: list = dataclasses.field(default_factory=list)  # where a subject's newest record is not
                         # the one counted (Check.pick "largest"): its Items, shown beside, never summed

    def _sum(self, attr):
        vals = [getattr(i, attr) for i in self.items]
        return None if any(v is None for v in vals) else sum(vals)

    @property
    def run(self):
        return self._sum("run")

    @property
    def skipped(self):
        return self._sum("skipped")

    @property
    def failed(self):
        return self._sum("failed")

    @property
    def bad(self):
        """Red: a failure, a skip, a count not recorded, or nothing run, in the row or by any one
        subject (pass-style checks: a kernel that ran zero cases beside others that ran is not
        hidden by the total); a survivor (kill-style); in the counted records or in a newer one
        shown beside them."""
        if self.newest and Row(self.check, self.newest).bad:
            return True
        if any(i.stale for i in self.items):  # no record of today's code: an earlier code's stands in
            return True
        style = check_of(self.check).style
        if style == "rate":
            return False
        if self.failed is None or self.failed > 0:
            return True
        if style == "kill":
            return False
        return self.skipped is None or self.skipped > 0 or not self.run or any(not i.run for i in self.items)

    @property
    def days(self):
        return sorted({i.record.day for i in self.items})

    @property
    def commits(self):
        return sorted({i.record.commit for i in self.items if i.record.commit})

    @property
    def records(self):
        return sorted({i.record.path for i in self.items})

    @property
    def evidence(self):
        return sorted({i.label for i in self.items}, key=EVIDENCE.index)


def block_of(it):
    """The summary block of an item: "amd" for AMD code from any folder, else its device folder."""
    return "amd" if it.vendor == "amd" or it.record.device_key.startswith("amd") else it.record.device_key


def _size(items):
    """Cases run by a subject's items of one record; None when one of them did not record it."""
    runs = [i.run for i in items]
    return None if any(r is None for r in runs) else sum(runs)


def counted_per_subject(items):
    """The summary's rule, written once (every consumer: the summary, the details, the console lines):
    per device block, check and subject, the items of one record are counted, by the check's pick
    (checks.Check.pick):
      newest   the newest record (its date; ties: its path);
      largest  the record whose items ran the most cases of the subject (a count not recorded ranks
               below any count; ties: the newer record), so that a short later check does not stand in
               for a long soak: the soak's row shows the strongest evidence, its date and commit.
    Returns (counted, beside): beside holds, where the newest record of a subject is not the counted
    one, the newest record's items: shown next to the counted ones, never summed with them, and red
    when they fail, skip or lack a count (a newer failure is never hidden by an older, larger pass).
    A record may list a subject twice (a property per dtype): all its items of the subject go together.
    Records of a subject's earlier code (Item.stale: a soak of a kernel before its default code changed,
    code.py) are left out where a record of today's code exists, whatever their size; where none does,
    the counted one is stale and its row red."""
    per = collections.defaultdict(lambda: collections.defaultdict(list))  # key -> record path -> items
    for it in items:
        per[(block_of(it), it.check, it.subject)][it.record.path].append(it)
    counted, beside = [], []
    for key, by_rec in per.items():
        today = [p for p in by_rec if not any(i.stale for i in by_rec[p])] or list(by_rec)
        newest = max(today, key=lambda p: (by_rec[p][0].record.date, p))
        chosen = newest
        if check_of(key[1]).pick == "largest":
            def rank(p):
                n = _size(by_rec[p])
                return (-1 if n is None else n, by_rec[p][0].record.date, p)
            chosen = max(today, key=rank)
        counted += by_rec[chosen]
        if chosen != newest:
            beside += by_rec[newest]
    return counted, beside


def collect(recs):
    """{device block: {check: Row}}. Blocks: each device folder (NVIDIA and CPU records), and "amd"
    for every item about AMD code whatever folder or evidence it came from."""
    items = []
    problems = []
    for kind, rs in recs.by_kind.items():
        for r in rs:
            try:
                items.extend(items_of(r))
            except (ValueError, TypeError, KeyError) as e:
                problems.append(f"{r.path}: {e}")
    blocks = collections.defaultdict(lambda: collections.defaultdict(list))
    newer = collections.defaultdict(lambda: collections.defaultdict(list))
    counted, beside = counted_per_subject(items)
    for dest, its in ((blocks, counted), (newer, beside)):
        for it in its:
            key = block_of(it)
            if key == "local":
                continue  # this machine's simulations of NVIDIA atoms: in the details, not the summary
            dest[key][it.check].append(it)
    out = {}
    for key, checks in blocks.items():
        order = list(CHECKS) + sorted(c for c in checks if c not in CHECKS)
        out[key] = {c: Row(c, checks[c], newer[key][c]) for c in order if c in checks}
    return out, problems


def fmt_count(v):
    return "not recorded" if v is None else f"{v:,}"


def cell(text, bad=False, cls=""):
    c = " ".join(x for x in (cls, "bad" if bad else "") if x)
    return f"<td class='{c}'>{text}</td>" if c else f"<td>{text}</td>"


def counts_text(row):
    """run / skipped / failed, or killed of total for kill and rate styles."""
    style = check_of(row.check).style
    if style in ("kill", "rate"):
        total, survived = row.run, row.failed
        if total is None or survived is None:
            return f"{fmt_count(total)} total, survivors not recorded"
        pct = f" ({100.0 * (total - survived) / total:.1f} %)" if style == "rate" and total else ""
        return f"{total - survived:,} of {total:,} killed{pct}"
    skipped = "skips not recorded" if row.skipped is None else f"{row.skipped:,} skipped"
    return f"{fmt_count(row.run)} run · {skipped} · {fmt_count(row.failed)} failed"


def row_note(row):
    """The subjects behind a red row (what failed, was skipped, or lacks a count), else a hint."""
    style = check_of(row.check).style
    if style == "rate":
        rates = sorted(((it.run - it.failed) / it.run, it.subject) for it in row.items if it.run and it.failed is not None)
        if rates:
            return f"per subject {100 * rates[0][0]:.1f}-{100 * rates[-1][0]:.1f} %, lowest: {rates[0][1]}"
    bad = []
    for it in row.items + row.newest:
        if it.stale or it.failed is None or it.failed or (style == "pass" and (it.skipped is None or it.skipped or not it.run)):
            if it.run == 0 and not it.failed and not it.skipped and it.failed is not None and it.skipped is not None:
                why = "ran zero cases" + (f" ({it.note})" if it.note else "")
            else:
                why = it.note or ("failed" if it.failed else "skipped" if it.skipped else "count not recorded")
            bad.append(f"{'newest ' if it in row.newest else ''}{it.subject}: {why}")
    if bad:
        return "; ".join(bad[:4]) + (f"; {len(bad) - 4} more" if len(bad) > 4 else "")
    extra = ROW_EXTRAS[row.check](row) if row.check in ROW_EXTRAS else ""
    notes = collections.Counter(it.note for it in row.items if it.note)
    if 1 < len(notes) <= 3 and sum(notes.values()) == len(row.items):
        text = ", ".join(f"{n} x{c}" for n, c in notes.most_common())
    else:
        per = collections.Counter()
        for it in row.items:
            per[it.subject] += it.run or 0
        parts = [f"{k} {v:,}" if v > 1 else k for k, v in sorted(per.items())]
        text = ""
        for i, p in enumerate(parts):
            if len(text) + len(p) > 75:
                text += f", +{len(parts) - i} more"
                break
            text += (", " if text else "") + p
    return "; ".join(x for x in (newest_text(row), text, extra) if x)


def newest_text(row):
    """Where the counted records are not the newest of their subjects (Check.pick "largest"): what the
    newest ones say, with their date and commit."""
    if not row.newest:
        return ""
    new = Row(row.check, row.newest)
    return f"newest {provenance(new)}: {counts_text(new)} ({len(new.items)} of {len(row.items)} subjects); counted: the largest"


def _probe_time(row):
    """probe --all's time on the device (after initialisation), from the newest record that says."""
    recs = sorted({id(i.record): i.record for i in row.items}.values(), key=lambda r: r.date)
    secs = [r.data["seconds_after_init"] for r in recs if isinstance(r.data.get("seconds_after_init"), (int, float))]
    return f"probe --all {secs[-1]:.2f} s" if secs else ""


def code_text(row):
    """Which records stand for today's code of each kernel whose default code changed (code.py), with
    their cases: "today's mma (since 228bc76): 20,004 cases, 2026-11-27-fine-soak-974195e (as mma/classes=fine)"."""
    per = collections.defaultdict(lambda: [0, set()])
    for it in row.items:
        if it.code and not it.stale:
            per[it.code][0] += it.run or 0
            how = it.note.split(";")[0].split(",")[0] if it.note.startswith("as ") else ""
            per[it.code][1].add(it.record.run.split("/")[-1] + (f" ({how})" if how else ""))
    return "; ".join(f"today's {c.replace(' since ', ' (since ', 1)}): {n:,} cases, {', '.join(sorted(runs))}"
                     for c, (n, runs) in sorted(per.items()))


ROW_EXTRAS = {"probes": _probe_time, "soak": code_text}


def provenance(row):
    days = row.days
    when = days[0] if len(days) == 1 else f"{days[0]}..{days[-1]}" if days else "?"
    commits = row.commits
    c = ", ".join(commits[:3]) + (f" +{len(commits) - 3}" if len(commits) > 3 else "")
    return f"{when} · {c}" if c else when


def check_table(rows, evidence=True):
    """The checks of one block; evidence=False where the block's title says it (one label)."""
    ev_head = "<th>evidence</th>" if evidence else ""
    out = [f"<table class='sum'><tr><th>check</th><th>run · skipped · failed</th>{ev_head}<th>date · commit</th>"
           "<th>subjects, or what is red</th></tr>"]
    for row in rows.values():
        ch = check_of(row.check)
        recs = row.records
        title = html.escape("; ".join(recs[:6]) + (f" (+{len(recs) - 6})" if len(recs) > 6 else ""))
        out.append("<tr>" + cell(f"<a href='#{anchor(row.check)}' title='{title}'>{html.escape(ch.title)}</a>")
                   + cell(html.escape(counts_text(row)), row.bad, "num")
                   + (cell(", ".join(row.evidence)) if evidence else "")
                   + cell(html.escape(provenance(row)), cls="prov")
                   + f"<td class='note{' bad' if row.bad else ''}'><div title='{html.escape(row_note(row))}'>"
                   f"{html.escape(row_note(row))}</div></td></tr>")
    out.append("</table>")
    return "".join(out)


AMD_CHECKS = {  # what each evidence label stands for in the AMD block
    "measured": "on an AMD GPU",
    "emulated": "an ISA emulator ran the code",
    "compiled": "device code built, not run",
    "simulated": "probe engine on simulated atoms",
    "documented": "layouts from AMD's documents",
}


def short_provenance(row):
    """One line: the newest day and commit, +N for the others (the whole list in the tooltip)."""
    days, commits = row.days, row.commits
    first = f"{days[-1]} · {commits[0]}" if days and commits else (days[-1] if days else "?")
    return first + (f" +{len(commits) - 1}" if len(commits) > 1 else "")


def calculator_row(calc_records):
    """The documented row from AMD's Matrix Instruction Calculator records: the reference tables of
    every AMD atom (the CPU suite compares them slot for slot: AmdCalculator.EveryAmdAtomMatchesEverySlot)."""
    newest = max(calc_records, key=lambda r: r.date)
    atoms = newest.data.get("atoms") or []
    tip = html.escape(f"{newest.path}: AMD's calculator {newest.data.get('calculator', {}).get('version', '')}; "
                      "every slot compared with the atoms by the CPU suite")
    return ("<tr>" + cell("documented") + cell(f"<a href='#layouts' title='{tip}'>AMD calculator tables</a>", cls="what")
            + cell(f"{len(atoms)} atoms' layouts", cls="num")
            + cell(html.escape(f"{newest.day} · {newest.commit}"), cls="prov1") + "</tr>")


def amd_table(rows, calc_records=()):
    """One row per evidence label, strongest first; each lists the checks that rest on it. A row is
    one line: the evidence label is its own column (not repeated in the check's title), the newest
    day and commit stand for the rest (all of them in the tooltip)."""
    per = collections.defaultdict(list)
    for row in rows.values():
        for ev in row.evidence:
            sub = Row(row.check, [i for i in row.items if i.label == ev])
            per[ev].append(sub)
    out = ["<table class='sum amd'><tr><th>evidence</th><th>what</th><th>result</th><th>date · commit</th></tr>"]
    for ev in EVIDENCE:
        if ev == "documented" and ev not in per and calc_records:
            out.append(calculator_row(calc_records))
            continue
        if ev not in per:
            out.append("<tr>" + cell(ev) + cell(html.escape(AMD_CHECKS[ev]), cls="what") + cell("no record yet", cls="none")
                       + cell("") + "</tr>")
            continue
        for sub in per[ev]:
            ch = check_of(sub.check)
            targets = sorted({i.subject.split()[0] for i in sub.items if i.subject.startswith("gfx")})
            title = ch.title.replace(f" ({ev})", "")
            what = html.escape(title) + (f" ({len(targets)} target{'s' if len(targets) > 1 else ''})" if targets else "")
            tip = html.escape(", ".join(targets) or AMD_CHECKS[ev])
            out.append("<tr>" + cell(ev) + cell(f"<a href='#{anchor(sub.check)}' title='{tip}'>{what}</a>", cls="what")
                       + cell(html.escape(counts_text(sub)), sub.bad, "num")
                       + f"<td class='prov1' title='{html.escape(provenance(sub))}'>{html.escape(short_provenance(sub))}</td>"
                       + "</tr>")
    out.append("</table>")
    return "".join(out)


def totals_text(rows):
    """One line for a folded device block: its checks' run / skipped / failed totals, red when any
    check failed or skipped (a folded block never hides a failure)."""
    run = sum(r.run or 0 for r in rows.values())
    skipped = sum(r.skipped or 0 for r in rows.values())
    failed = sum(r.failed or 0 for r in rows.values())
    bad = any(r.bad for r in rows.values())
    text = f"{len(rows)} checks, {run} run \u00b7 {skipped} skipped \u00b7 {failed} failed"
    return f"<span class='tot-bad'>{text}</span>" if bad else text


def perf_table(table, link="performance"):
    """The same-run ratios: rows are groups, columns kernel x baseline; each cell the geometric mean
    over the group's shapes with the range, marked with its run."""
    if not table.cells:
        return "<p class='none'>No benchmark record with a baseline from the same run.</p>"
    cols = [(k, b) for k in table.columns for b in table.baselines if any((g, k, b) in table.cells for g in table.groups)]
    marks = {r.run: "abcdefghij"[i] for i, r in enumerate(table.runs)}
    head = "".join(f"<th>{html.escape(k)}<br><small>/ {html.escape(b)}</small></th>" for k, b in cols)
    out = [f"<table class='sum perf'><tr><th>time ratio<br><small>baseline / flashprobe</small></th>{head}</tr>"]
    for g in table.groups:
        tds = []
        for k, b in cols:
            x = table.cells.get((g, k, b))
            if x is None:
                tds.append("<td></td>")
                continue
            cls = "up" if x.lo >= 1.0 else "down" if x.hi < 1.0 else ""
            tip = html.escape(f"{x.n} shapes, min {x.lo:.3f}, max {x.hi:.3f}; {x.run.run}")
            tds.append(f"<td class='{cls}' title='{tip}'>{x.gmean:.2f}<small> {x.lo:.2f}-{x.hi:.2f}</small>"
                       f"<sup>{marks[x.run.run]}</sup></td>")
        out.append(f"<tr><td><a href='#{link}'>{html.escape(g)}</a></td>{''.join(tds)}</tr>")
    out.append("</table><p class='foot'>")
    out.append("; ".join(f"<sup>{marks[r.run]}</sup> <code>{html.escape(r.run.split('/', 1)[-1])}</code> "
                         f"({r.date[:10]}, {', '.join(r.commits)}, {html.escape(r.timing or '?')} timing)"
                         for r in table.runs))
    out.append(". Geometric mean over the group's shapes and dtypes, then min-max; &gt; 1: flashprobe faster. "
               "best: the fastest shipped kernel per shape, from a run that timed every kernel.</p>")
    return "".join(out)
