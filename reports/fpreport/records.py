"""Records on disk -> Record objects that know their device folder, run, date, commit and evidence.

reports/data/<device>/<run>/ holds the records of one device call (reports/README.md, "Records").
Every file below a run belongs to that run, subfolders (extra/, probes/) included. Three forms are
read:
  *.json, *.json.gz   flashprobe records: an object (or a list of them) whose "schema" is
                      "flashprobe.<kind>/<version>"; kind is what the readers key on
  gtest-<name>.json   GoogleTest's own JSON (--gtest_output=json), kind "gtest", name <name>
  sanitize-<tool>.txt compute-sanitizer's output, kind "sanitizer" (its closing summary line only)
  crosscheck-summary.json  the PyTorch cross-check's summary, kind "crosscheck"
Nothing else (logs, READMEs) is read.

Example:
    recs = load(["reports/data"])
    for r in recs.of("bench"):
        print(r.device_key, r.run, r.date, r.commit, r.evidence, len(r.data["results"]))
"""
import collections, dataclasses, glob, gzip, json, os, re

# The evidence labels (reports/README.md): what a claim rests on, strongest first.
EVIDENCE = ("measured", "emulated", "compiled", "simulated", "documented")


@dataclasses.dataclass
class Record:
    kind: str            # "bench", "probe", "gtest", ... (schema "flashprobe.<kind>/N", or the file form)
    data: dict           # the record itself
    path: str            # relative to the data root it was found under, e.g. h100-80gb-hbm3/RUN/bench.json
    root: str            # that data root
    name: str = ""       # gtest binary or sanitizer tool, from the file name
    inherited: dict = dataclasses.field(default_factory=dict)  # date and commit of the run, for
                         # records that carry none (GoogleTest's JSON, sanitizer output)

    @property
    def device_key(self):  # the first folder under the data root: h100-80gb-hbm3, amd-compiled, cpu
        return self.path.split("/", 1)[0] if "/" in self.path else ""

    @property
    def run(self):  # <device>/<run>: the device call that made the record
        parts = self.path.split("/")
        return "/".join(parts[:2]) if len(parts) > 2 else parts[0]

    @property
    def date(self):
        return str(self.data.get("date") or self.data.get("timestamp") or self.inherited.get("date") or "")

    @property
    def day(self):
        return self.date[:10]

    @property
    def commit(self):
        return str(self.data.get("commit") or self.inherited.get("commit") or "")[:7]

    @property
    def device_name(self):
        d = self.data.get("device")
        if isinstance(d, dict):
            return d.get("name") or ""
        return d if isinstance(d, str) else ""

    @property
    def evidence(self):
        return evidence_of(self.data, self.kind)


# Kinds whose older records did not say: the tolerance calibration runs simulated kernels on the CPU.
DEFAULT_EVIDENCE = {"calibration": "simulated"}


def evidence_of(rec, kind=""):
    """The record's evidence label: its own "evidence" field, else derived from what older records
    say about themselves (reports/README.md lists the rules). Raises ValueError on an unknown label."""
    ev = rec.get("evidence")
    if ev is not None:
        if ev not in EVIDENCE:
            raise ValueError(f"evidence {ev!r} is not one of {', '.join(EVIDENCE)}")
        return ev
    if kind in DEFAULT_EVIDENCE:
        return DEFAULT_EVIDENCE[kind]
    said = " ".join(str(rec.get(k) or "") for k in ("source", "status")).lower()
    for word, label in (("emulat", "emulated"), ("simulat", "simulated"), ("compiled", "compiled"),
                        ("document", "documented")):
        if word in said:
            return label
    return "measured"


class Records:
    def __init__(self):
        self.by_kind = collections.defaultdict(list)
        self.problems = []  # files that could not be read: (path, why)
        self.device_info = {}  # run -> text of its device-info.txt (driver version for captions)

    def add(self, r):
        self.by_kind[r.kind].append(r)

    def of(self, kind):
        return self.by_kind.get(kind, [])

    def __len__(self):
        return sum(len(v) for v in self.by_kind.values())

    def inherit(self):
        """Records without a date or commit take their run's: the newest date and the commit most
        of its records name; in a run where no record names them (compute-sanitizer's text alone),
        the run folder's name, <date>-<what>[-<commit>] (reports/README.md, "Records")."""
        dates, commits = collections.defaultdict(str), collections.defaultdict(collections.Counter)
        for rs in self.by_kind.values():
            for r in rs:
                if r.data.get("date"):
                    dates[r.run] = max(dates[r.run], str(r.data["date"]))
                if r.data.get("commit") and r.data.get("commit") != "unknown":
                    commits[r.run][str(r.data["commit"])[:7]] += 1
        for rs in self.by_kind.values():
            for r in rs:
                named = RUN_NAME.match(r.run.split("/")[-1])
                r.inherited = {"date": dates.get(r.run, "") or (named.group(1) if named else ""),
                               "commit": commits[r.run].most_common(1)[0][0] if commits.get(r.run)
                               else (named.group(2) or "" if named else "")}

    def driver(self, run):
        """The NVIDIA driver version of a run (nvidia-smi's line in device-info.txt), or ""."""
        m = re.search(r"^[^,\n]+, (\d+\.\d+(?:\.\d+)?), ", self.device_info.get(run, ""), re.M)
        return m.group(1) if m else ""


def _read_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


RUN_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-.*?(?:-([0-9a-f]{7,12}))?$")

SANITIZER_SUMMARY = re.compile(r"^=+ (?:ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: (\d+) hazards? displayed)", re.M)


def _sanitizer(path):
    """compute-sanitizer's closing line: {"tool", "errors"}; errors None when the line is missing
    (the tool did not finish)."""
    tool = os.path.basename(path)[len("sanitize-"):-len(".txt")]
    with open(path, errors="replace") as f:
        text = f.read()
    found = SANITIZER_SUMMARY.findall(text)
    errors = None
    if found:
        e, h = found[-1]
        errors = int(e or h)
    return {"tool": tool, "errors": errors, "expect_errors": tool.endswith("-mutant")}


def load(roots, allow=None, prefix=""):
    """Every record under the given roots (folders or single files). allow(rel_path) -> bool, if
    given, decides which run folders are read (the index's current runs). prefix ("<device>/<run>")
    places records that lie outside the reports/data layout (the main job's own, this machine's)."""
    out = Records()
    for root in roots:
        if os.path.isfile(root):
            files, base = [root], os.path.dirname(root)
        else:
            files, base = sorted(glob.glob(os.path.join(root, "**", "*"), recursive=True)), root
        for path in files:
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if prefix:
                rel = f"{prefix}/{rel}"
            if allow is not None and not allow(rel):
                continue
            fn = os.path.basename(path)
            if fn == "device-info.txt":
                with open(path, errors="replace") as f:
                    out.device_info["/".join(rel.split("/")[:2])] = f.read()
                continue
            if fn.startswith("sanitize-") and fn.endswith(".txt"):
                out.add(Record("sanitizer", _sanitizer(path), rel, base, fn[len("sanitize-"):-4]))
                continue
            if not (fn.endswith(".json") or fn.endswith(".json.gz")):
                continue
            try:
                j = _read_json(path)
            except (OSError, ValueError, EOFError) as e:
                out.problems.append((rel, str(e)))
                continue
            if fn.startswith("gtest-") and isinstance(j, dict) and "testsuites" in j:
                out.add(Record("gtest", j, rel, base, re.sub(r"\.json(\.gz)?$", "", fn[len("gtest-"):])))
                continue
            if fn == "crosscheck-summary.json" and isinstance(j, dict):
                out.add(Record("crosscheck", j, rel, base))
                continue
            for r in (j if isinstance(j, list) else [j]):
                s = r.get("schema") if isinstance(r, dict) else None
                if isinstance(s, str) and s.startswith("flashprobe."):
                    out.add(Record(s.split("/")[0].split(".", 1)[1], r, rel, base))
    out.inherit()
    return out
