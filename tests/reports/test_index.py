#!/usr/bin/python3
"""The records policy (reports/README.md, "What reports/data keeps"): reports/data and its INDEX.md
agree, every run that the README, a notes file, a script or a source comment cites is in the index,
a removed run names a commit that holds it, and the index's parser refuses malformed rows."""
import fnmatch, os, subprocess, tempfile, unittest

from fixtures import DATA, ROOT as root, read_text
from fpreport import index
CITING = ("*.md", "*.cpp", "*.h", "*.cu", "*.cuh", "*.py", "*.sh", "*.txt", "*.cmake")


def citing_files():
    """Files that may cite a run: everything outside reports/data (whose runs cite each other) and
    outside these tests (which make names up)."""
    out = []
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "build" and os.path.join(rel, d) not in ("reports/data", "tests/reports")
                   and not (rel == "." and d in ("out", "report"))]
        for f in files:
            if any(fnmatch.fnmatch(f, p) for p in CITING) or f in ("main", "test", "run-all", "soak", "stage-carry"):
                out.append(os.path.join(dirpath, f))
    return out


class TheTree(unittest.TestCase):
    def setUp(self):
        self.entries = index.parse(os.path.join(DATA, "INDEX.md"))

    def test_tree_and_index_agree(self):
        self.assertEqual(index.disagreements(DATA, self.entries), [])

    def test_every_cited_run_is_indexed(self):
        names = {e.name for e in self.entries}
        missing = []
        for p in citing_files():
            for run in index.cited_runs(read_text(p)):
                if run not in names:
                    missing.append(f"{os.path.relpath(p, root)}: {run}")
        self.assertEqual(missing, [], "runs cited but not in reports/data/INDEX.md")

    def test_removed_runs_are_in_git(self):
        if not os.path.isdir(os.path.join(root, ".git")) and not os.path.isfile(os.path.join(root, ".git")):
            self.skipTest("not a git checkout")
        missing = []
        for e in self.entries:
            if e.status == "git":
                r = subprocess.run(["git", "-C", root, "cat-file", "-e", f"{e.git}:reports/data/{e.run}/README.md"],
                                   capture_output=True)
                if r.returncode != 0:
                    missing.append(f"{e.run}: not in {e.git}")
        self.assertEqual(missing, [])

    def test_readme_cites_only_runs_in_the_tree(self):
        """The README's measured claims rest on runs a reader has, not on git history."""
        text = read_text(os.path.join(root, "README.md"))
        in_tree = {e.name for e in self.entries if e.in_tree}
        self.assertEqual(sorted(index.cited_runs(text) - in_tree), [])

    def test_every_run_has_a_readme(self):
        for e in self.entries:
            if e.in_tree and "/" in e.run:
                self.assertTrue(os.path.isfile(os.path.join(DATA, e.run, "README.md")), e.run)


class Parser(unittest.TestCase):
    def parse(self, rows, header="| run | date | commit | status | what it showed |"):
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(f"# x\n\n{header}\n| --- | --- | --- | --- | --- |\n" + "".join(r + "\n" for r in rows))
        try:
            return index.parse(f.name)
        finally:
            os.unlink(f.name)

    def test_good_rows(self):
        es = self.parse(["| dev/2026-11-24-a | 2026-11-24 | abc1234 | current | a gate |",
                         "| dev/2026-11-23-b | 2026-11-23 | abc1235 | git 0123abc | an old bench |",
                         "| cpu | 2026-11-23 | abc1236 | decision | calibration |"])
        self.assertEqual([(e.run, e.status, e.git, e.in_tree) for e in es],
                         [("dev/2026-11-24-a", "current", "", True), ("dev/2026-11-23-b", "git", "0123abc", False),
                          ("cpu", "decision", "", True)])

    def test_bad_rows_name_the_line(self):
        for row, why in (("| dev/x | 24-11-2026 | abc1234 | current | a |", "date '24-11-2026'"),
                         ("| dev/x | 2026-11-24 | xyz | current | a |", "commit 'xyz'"),
                         ("| dev/x | 2026-11-24 | abc1234 | kept | a |", "status 'kept'"),
                         ("| dev/x | 2026-11-24 | abc1234 | git | a |", "status 'git'"),
                         ("| dev/x | 2026-11-24 | abc1234 | current |  |", "'what it showed' is empty"),
                         ("| dev/x | 2026-11-24 | abc1234 | current |", "4 cells")):
            with self.assertRaisesRegex(index.IndexError_, f":5: .*{why}"):
                self.parse([row])
        with self.assertRaisesRegex(index.IndexError_, "listed twice"):
            self.parse(["| d/a | 2026-11-24 | abc1234 | current | a |"] * 2)
        with self.assertRaisesRegex(index.IndexError_, "columns must be"):
            self.parse([], header="| run | when | status |")

    def test_disagreements(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "dev", "2026-11-24-a"))
            os.makedirs(os.path.join(d, "dev", "2026-11-24-stray"))
            es = self.parse(["| dev/2026-11-24-a | 2026-11-24 | abc1234 | current | a |",
                             "| dev/2026-11-23-gone | 2026-11-23 | abc1234 | current | b |"])
            got = index.disagreements(d, es)
            self.assertEqual(len(got), 2)
            self.assertIn("2026-11-24-stray: in reports/data but not in INDEX.md", got[0])
            self.assertIn("2026-11-23-gone: INDEX.md says current but it is not in reports/data", got[1])
            allow = index.allow_current(es)
            self.assertTrue(allow("dev/2026-11-24-a/bench.json"))
            self.assertFalse(allow("dev/2026-11-24-ab/bench.json"))


if __name__ == "__main__":
    unittest.main()
