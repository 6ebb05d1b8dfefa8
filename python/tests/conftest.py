"""pytest setup: the numpy subjects beside the tests, the flashprobe command for CLI parity, the budget."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# Hypothesis's own tests of our strategies: no example database in the tree, no deadline (the oracle's
# time varies with the machine's load).
settings.register_profile("flashprobe", database=None, deadline=None)
settings.load_profile("flashprobe")


@pytest.fixture(scope="session")
def cli():
    """The flashprobe command of this tree ($FLASHPROBE_EXE, or on PATH), to compare the Python
    package's verdicts and messages with the CLI's; the test is skipped when there is none."""
    exe = os.environ.get("FLASHPROBE_EXE") or shutil.which("flashprobe")
    if not exe or not Path(exe).is_file():
        pytest.skip("no flashprobe command (set FLASHPROBE_EXE to build/<tree>/flashprobe)")

    def run(*args):
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=300)

    return run
