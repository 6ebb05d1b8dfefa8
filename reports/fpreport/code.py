"""Which code a soak ran: a soak row names a kernel (or a variant) and the commit it was built from;
reports/kernel_code.json lists the newest change of each shipped kernel's default code. A soak stands
for today's code of the kernel only when its commit contains that change, or when it ran the variant
that was this code before the change ("was", from "was_since" on). Anything else ran earlier code:
the summary never counts it as a soak of today's kernel (summary.counted_per_subject, Item.stale).

    lineage = Lineage.load()                       # reports/kernel_code.json, git for the ancestry
    ran = lineage.ran("mma/classes=fine", "974195e")
    ran.kernel, ran.via, ran.stale                 # "mma", "as mma/classes=fine: ...", ""
"""
import dataclasses, json, os, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHANGES = os.path.join(ROOT, "reports", "kernel_code.json")


@dataclasses.dataclass(frozen=True)
class Change:
    kernel: str
    commit: str      # the commit that made this the kernel's default code
    what: str
    was: str = ""    # the variant that ran this code before it
    was_since: str = ""  # the first commit where the variant's code is this code


@dataclasses.dataclass(frozen=True)
class Ran:
    kernel: str      # the subject's kernel: today's kernel where the row ran its code under a variant name
    via: str = ""    # how the row stands for today's kernel ("as mma/classes=fine, mma's code since 228bc76")
    stale: str = ""  # why the row does not stand for today's code of its kernel ("" where it does)
    code: str = ""   # "mma since 228bc76" for a kernel with a listed change, else ""


def git_contains(commit, ancestor):
    """True when commit's history holds ancestor, False when not, None when git cannot say (no
    repository, or a commit it does not know)."""
    if not commit or not ancestor:
        return None
    try:
        r = subprocess.run(["git", "-C", ROOT, "merge-base", "--is-ancestor", ancestor, commit],
                           capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(r.returncode)


class Lineage:
    def __init__(self, changes, contains=git_contains):
        self.changes = {}
        for c in changes:
            if c.kernel in self.changes:
                raise ValueError(f"kernel_code: {c.kernel} listed twice (keep its newest change only)")
            self.changes[c.kernel] = c
        self._contains, self._memo = contains, {}

    @classmethod
    def load(cls, path=CHANGES, contains=git_contains):
        with open(path) as f:
            data = json.load(f)
        return cls([Change(**c) for c in data["changes"]], contains)

    def contains(self, commit, ancestor):
        key = (commit, ancestor)
        if key not in self._memo:
            self._memo[key] = self._contains(commit, ancestor)
        return self._memo[key]

    def ran(self, name, commit):
        """What a soak row of kernel or variant `name` at `commit` ran (Ran)."""
        ch = self.changes.get(name)
        if ch:
            code = f"{name} since {ch.commit}"
            has = self.contains(commit, ch.commit)
            if has:
                return Ran(name, code=code)
            if has is None:
                return Ran(name, stale=f"which code of {name} it ran is not known (commit '{commit}' not in this "
                                       f"checkout's history; {name} changed at {ch.commit}: {ch.what})", code=code)
            return Ran(name, stale=f"ran {name}'s code before {ch.commit} ({ch.what}), not today's", code=code)
        for ch in self.changes.values():
            if name == ch.was and ch.was_since and self.contains(commit, ch.was_since) \
                    and self.contains(commit, ch.commit) is False:
                return Ran(ch.kernel, via=f"as {name}, {ch.kernel}'s code since {ch.commit}",
                           code=f"{ch.kernel} since {ch.commit}")
        return Ran(name)


_current = None


def current():
    """The repository's lineage (reports/kernel_code.json), loaded once."""
    global _current
    if _current is None:
        _current = Lineage.load()
    return _current


def use(lineage):
    """Sets the lineage the soak's reader uses (tests pass their own); returns the previous one."""
    global _current
    prev, _current = _current, lineage
    return prev
