"""Shared by the report's tests: the repository's paths (reports/ importable) and file helpers that
close what they open."""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "reports", "data")
sys.path.insert(0, os.path.join(ROOT, "reports"))


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f)


def read_text(path):
    with open(path, errors="replace") as f:
        return f.read()


def read_head(path, n=8):
    with open(path, "rb") as f:
        return f.read(n)


_lineage = []


def setUpModule():
    """For a test module whose records are made up (import it there with tearDownModule): no kernel's default
    code changed (fpreport/code.py), so that a soak's kernel and commit stand for themselves; the code a soak
    ran has its own tests (test_summary.py, SoakCode and RepositorySoaks)."""
    from fpreport import code
    _lineage.append(code.use(code.Lineage([])))


def tearDownModule():
    from fpreport import code
    code.use(_lineage.pop())
