"""Layout diagrams, drawn from the layout tables inside probe records (never from formulas written
here): for each operand a grid of the matrix, every element coloured by the lane that holds it and
labelled T<lane>V<slot> (x n where n lanes hold a replica). Atoms whose tables are identical share
one diagram. The formulas shown beside a diagram are the ones the probe derived, read from the record.

Written as SVG (no plotting library: a few thousand rectangles are a string join).
"""
import collections, html, json
CELL_LABELLED = 26   # px per element where labels fit (up to 32 columns)
CELL_SMALL = 4       # px per element for the large wgmma accumulators


def lane_colour(lane, lanes):
    hue = (lane * 360.0 / max(lanes, 1) * 7) % 360  # neighbouring lanes far apart on the wheel
    return f"hsl({hue:.0f},70%,{72 if lane % 2 else 82}%)"


def operand_svg(op, title, x0):
    rows, cols, lanes, slots = op["rows"], op["cols"], op["lanes"], op["slots"]
    cells = collections.defaultdict(list)
    for i, e in enumerate(op["table"]):
        if e is not None:
            cells[(e[0], e[1])].append((i // slots, i % slots))
    labelled = cols <= 32 and rows <= 32
    s = CELL_LABELLED if labelled else CELL_SMALL
    top = 30
    parts = [f"<text x='{x0}' y='14' class='t'>{html.escape(title)}</text>",
             f"<text x='{x0}' y='26' class='s'>{rows}x{cols}, {lanes} lanes x {slots} slots</text>"]
    for r in range(rows):
        c = 0
        while c < cols:
            hs = cells.get((r, c))
            if not hs:
                parts.append(f"<rect x='{x0 + c * s}' y='{top + r * s}' width='{s}' height='{s}' fill='#eee'/>")
                c += 1
                continue
            lane, slot = hs[0]
            run = 1
            if not labelled:  # merge a row's neighbours held by the same lane into one rectangle
                while c + run < cols and (cells.get((r, c + run)) or [(None,)])[0][0] == lane:
                    run += 1
            parts.append(f"<rect x='{x0 + c * s}' y='{top + r * s}' width='{s * run}' height='{s}' "
                         f"fill='{lane_colour(lane, lanes)}'/>")
            if labelled:
                rep = f"x{len(hs)}" if len(hs) > 1 else ""
                parts.append(f"<text x='{x0 + c * s + s / 2}' y='{top + r * s + 10}' class='l'>T{lane}</text>"
                             f"<text x='{x0 + c * s + s / 2}' y='{top + r * s + 20}' class='l'>V{slot}{rep}</text>")
            c += run
    return "".join(parts), cols * s, top + rows * s


OPERANDS = (("A", "A (rows m, cols k)"), ("B", "B (rows k, cols n)"), ("C", "C/D (rows m, cols n)"),
            ("loaded", "the loaded fragment (rows, cols of the tile)"))


def operands(lay):
    """A record's layout as {operand: table}: an MMA's A, B and C, or a load's one fragment."""
    if isinstance(lay, dict) and "table" in lay:
        return {"loaded": lay}
    if isinstance(lay, dict) and all(isinstance(lay.get(k), dict) and "table" in lay[k] for k in "ABC"):
        return {k: lay[k] for k in "ABC"}
    return None


def diagram_svg(layout):
    x, parts, height = 0, [], 0
    for key, title in OPERANDS:
        if key not in layout:
            continue
        svg, w, h = operand_svg(layout[key], title, x)
        parts.append(svg)
        x += max(w, 150) + 20
        height = max(height, h)
    style = ("<style>.t{font:bold 12px sans-serif}.s{font:10px sans-serif;fill:#555}"
             ".l{font:8px monospace;text-anchor:middle}</style>")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{x}' height='{height + 4}' "
            f"viewBox='0 0 {x} {height + 4}'>{style}{''.join(parts)}</svg>")


def atom_results(recs):
    """(atom name, layout, result, record) for every probed atom with a layout, hardware first."""
    out = []
    for r in recs.of("probe"):
        d = r.data
        lst = d.get("results") if isinstance(d.get("results"), list) else [d] if d.get("atom") else []
        for a in lst:
            res = a.get("result") if isinstance(a.get("result"), dict) else a
            lay = operands(a.get("layout") or res.get("layout"))
            if lay:
                out.append((a.get("atom") or res.get("atom"), lay, res, r))
    out.sort(key=lambda t: (t[3].evidence != "measured", t[0]))
    return out


def formulas_html(res):
    f = res.get("formulas") or {}
    rows = []
    for op, g in sorted(f.items()):
        if isinstance(g, dict) and g.get("row"):
            rows.append(f"<tr><td>{'C/D' if op == 'C' else op}</td><td><code>({html.escape(g['row'])}, "
                        f"{html.escape(g.get('col', ''))})</code></td></tr>")
    return ("<table class='fx'><tr><th>operand</th><th>(row, col) of (lane, slot), as the probe derived it</th></tr>"
            + "".join(rows) + "</table>") if rows else ""


def layout_section(recs, out_dir, caption_of):
    """Writes one SVG per distinct layout; returns the HTML of the section's figures."""
    groups = collections.OrderedDict()
    for name, lay, res, rec in atom_results(recs):
        sig = json.dumps({k: v["table"] for k, v in lay.items()})
        g = groups.setdefault((sig, rec.evidence), {"lay": lay, "res": res, "rec": rec, "names": [], "verdicts": set()})
        if name not in g["names"]:
            g["names"].append(name)
            g["verdicts"].add(str(res.get("verdict") or ""))
    # An atom probed on hardware is not drawn again from its simulation.
    on_hw = {n for (sig, ev), g in groups.items() if ev == "measured" for n in g["names"]}
    html_parts, n = [], 0
    for (sig, ev), g in groups.items():
        names = [x for x in g["names"] if ev == "measured" or x not in on_hw]
        if not names:
            continue
        fn = f"layout_{n:03d}.svg"
        n += 1
        with open(f"{out_dir}/{fn}", "w") as f:
            f.write(diagram_svg(g["lay"]))
        what = "probed on hardware" if ev == "measured" else f"{ev}: the documented layout, through the probe engine"
        html_parts.append(
            f"<figure><figcaption><b>{html.escape(names[0])}</b>"
            + (f" and {len(names) - 1} more with the same layout ({html.escape(', '.join(names[1:]))})" if len(names) > 1 else "")
            + f" — {html.escape(what)}; verdict: {html.escape('; '.join(sorted(g['verdicts'])))}</figcaption>"
            f"<img src='{fn}' alt='layout of {html.escape(names[0])}' style='max-width:100%'>"
            + formulas_html(g["res"])
            + f"<small>{html.escape(caption_of(g['rec']))}</small></figure>")
    return "".join(html_parts), n
