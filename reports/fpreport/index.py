"""The records index, reports/data/INDEX.md: one row per run that ever backed a claim.

    | run | date | commit | status | what it showed |
    | --- | --- | --- | --- | --- |
    | h100-80gb-hbm3/2026-11-24-mma-v9-gate | 2026-11-24 | 4efa38b | current | grid, mutants, bench ... |
    | h100-80gb-hbm3/2026-11-24-mma-v10-lazy-soak | 2026-11-24 | 9e3ad64 | decision | ... |
    | h100-80gb-hbm3/2026-11-24-mma-v6 | 2026-11-24 | 13b0af9 | git bccce6b | ... |

run: the folder under reports/data (a device folder alone for loose files, e.g. cpu); date: the day
of the device call; commit: the build that ran; status:
  current      in the tree; the report and the main job read it
  decision     in the tree because a design decision cites it; listed, not summarized
  git C        removed from the tree; commit C holds it (git show C:reports/data/<run>/README.md)
The report reads only current runs; tests/reports/test_index.py checks that the tree and this file
agree and that every run named in the README, the notes and the sources is listed.
"""
import dataclasses, os, re

COLUMNS = ["run", "date", "commit", "status", "what it showed"]
RUN_NAME = re.compile(r"\b(20\d\d-\d\d-\d\d-[a-z0-9][a-z0-9-]*[a-z0-9])\b")


@dataclasses.dataclass
class Entry:
    run: str
    date: str
    commit: str
    status: str      # current, decision or git
    git: str         # the commit that holds a removed run
    showed: str

    @property
    def in_tree(self):
        return self.status in ("current", "decision")

    @property
    def device_key(self):
        return self.run.split("/", 1)[0]

    @property
    def name(self):
        return self.run.rsplit("/", 1)[-1]


class IndexError_(ValueError):
    pass


def parse(path):
    """The entries of INDEX.md; IndexError_ naming the line on anything malformed."""
    entries, header = [], None
    with open(path) as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            if cells != COLUMNS:
                raise IndexError_(f"{path}:{n}: the table's columns must be {' | '.join(COLUMNS)}, not {' | '.join(cells)}")
            header = cells
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        if len(cells) != len(COLUMNS):
            raise IndexError_(f"{path}:{n}: {len(cells)} cells, expected {len(COLUMNS)}")
        run, date, commit, status, showed = cells
        run = run.strip("`").rstrip("/")
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*(/[A-Za-z0-9._-]+)?", run):
            raise IndexError_(f"{path}:{n}: run {run!r} is not <device>/<run> or <device>")
        if not re.fullmatch(r"20\d\d-\d\d-\d\d", date):
            raise IndexError_(f"{path}:{n}: date {date!r} is not YYYY-MM-DD")
        if not re.fullmatch(r"[0-9a-f]{7,40}|-", commit):
            raise IndexError_(f"{path}:{n}: commit {commit!r} is not a hex commit (or - for mixed builds)")
        m = re.fullmatch(r"current|decision|git ([0-9a-f]{7,40})", status)
        if not m:
            raise IndexError_(f"{path}:{n}: status {status!r} is not current, decision or 'git <commit>'")
        if not showed:
            raise IndexError_(f"{path}:{n}: 'what it showed' is empty for {run}")
        entries.append(Entry(run, date, commit, status.split()[0], m.group(1) or "", showed))
    if header is None:
        raise IndexError_(f"{path}: no table with the columns {' | '.join(COLUMNS)}")
    seen = set()
    for e in entries:
        if e.run in seen:
            raise IndexError_(f"{path}: {e.run} is listed twice")
        seen.add(e.run)
    return entries


def tree_runs(data_root):
    """The run folders (and loose device folders) present under reports/data."""
    runs = set()
    for dev in sorted(os.listdir(data_root)):
        p = os.path.join(data_root, dev)
        if not os.path.isdir(p):
            continue
        subs = [s for s in sorted(os.listdir(p)) if os.path.isdir(os.path.join(p, s))]
        loose = [s for s in os.listdir(p) if os.path.isfile(os.path.join(p, s))]
        runs.update(f"{dev}/{s}" for s in subs)
        if loose:
            runs.add(dev)
    return runs


def disagreements(data_root, entries):
    """What the tree and the index disagree on, as sentences (empty when they agree)."""
    out = []
    present = tree_runs(data_root)
    listed = {e.run: e for e in entries}
    for r in sorted(present - set(listed)):
        out.append(f"{r}: in reports/data but not in INDEX.md (add a row: current or decision)")
    for e in entries:
        if e.in_tree and e.run not in present:
            out.append(f"{e.run}: INDEX.md says {e.status} but it is not in reports/data (status git <commit> if removed)")
        if not e.in_tree and e.run in present:
            out.append(f"{e.run}: INDEX.md says removed (git {e.git}) but it is still in reports/data")
    return out


def allow_current(entries):
    """allow(rel_path) for records.load: True for files of current runs only."""
    cur = [e.run for e in entries if e.status == "current"]

    def allow(rel):
        return any(rel == r or rel.startswith(r + "/") for r in cur)
    return allow


def cited_runs(text):
    """Run names (YYYY-MM-DD-name) cited in a text."""
    return set(RUN_NAME.findall(text))
