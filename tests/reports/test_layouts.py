#!/usr/bin/python3
"""Layout diagrams (reports/fpreport/layouts.py) are drawn from the probe record's own table: every
(lane, slot) of the shipped H100 probe records appears at the element the table gives it, replicas
are marked, and the formulas shown are the record's, not written in the report."""
import glob, os, re, tempfile, unittest

from fixtures import ROOT as root, read_json
from fpreport import layouts, records

CELL = re.compile(r"<rect x='(\d+)' y='(\d+)' width='\d+' height='\d+' fill='hsl[^']*'/>"
                  r"<text [^>]*>T(\d+)</text><text [^>]*>V(\d+)(?:x(\d+))?</text>")


def probe_records():
    paths = sorted(glob.glob(os.path.join(root, "reports", "data", "*", "*", "probes", "probe-*.json")))
    return [p for p in paths if read_json(p).get("layout")]


class Diagrams(unittest.TestCase):
    def test_every_slot_drawn_where_the_record_puts_it(self):
        paths = probe_records()
        self.assertTrue(paths, "no hardware probe records with layouts under reports/data")
        checked = 0
        for p in paths:
            lay = read_json(p)["layout"]
            op = lay.get("A")
            if op is None:
                continue  # ldmatrix: one loaded operand, not drawn as an MMA layout
            if op["cols"] > 32 or op["rows"] > 32:
                continue
            svg, _, _ = layouts.operand_svg(op, "A", 0)
            drawn = {}
            for x, y, lane, slot, rep in CELL.findall(svg):
                drawn[((int(y) - 30) // layouts.CELL_LABELLED, int(x) // layouts.CELL_LABELLED)] = (int(lane), int(slot), int(rep or 1))
            held = {}
            for i, e in enumerate(op["table"]):
                if e is not None:
                    held.setdefault(tuple(e), []).append((i // op["slots"], i % op["slots"]))
            self.assertEqual(set(drawn), set(held), p)
            for rc, (lane, slot, rep) in drawn.items():
                self.assertEqual((lane, slot), held[rc][0], f"{p} element {rc}")
                self.assertEqual(rep, len(held[rc]), f"{p} element {rc}: replicas")
            checked += 1
        self.assertGreater(checked, 10)

    def test_large_layouts_merge_runs_but_cover_every_element(self):
        op = {"rows": 64, "cols": 64, "lanes": 128, "slots": 32,
              "table": [[(i // 32) // 2, ((i // 32) % 2) * 32 + i % 32] for i in range(128 * 32)]}
        svg, w, h = layouts.operand_svg(op, "C", 0)
        self.assertNotIn("<text x='", svg.split("</text>", 2)[-1])  # no per-element labels at this size
        widths = [int(m) for m in re.findall(r"width='(\d+)' height='4' fill='hsl", svg)]
        self.assertEqual(sum(widths), 64 * 64 * layouts.CELL_SMALL)
        self.assertEqual(len(widths), 128)  # a lane's 32 neighbouring elements share one rectangle

    def test_section_shows_the_records_formulas(self):
        recs = records.load([os.path.join(root, "reports", "data")],
                            allow=lambda rel: "/probes/" in rel)
        with tempfile.TemporaryDirectory() as d:
            html, n = layouts.layout_section(recs, d, lambda r: r.path)
            self.assertGreater(n, 5)
            self.assertEqual(len(glob.glob(os.path.join(d, "layout_*.svg"))), n)
            with_formulas = [read_json(p)["result"] for p in probe_records()]
            some = [r["formulas"]["A"]["row"] for r in with_formulas if r.get("formulas", {}).get("A")][0]
            self.assertIn(some.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;"), html)


if __name__ == "__main__":
    unittest.main()
