#!/usr/bin/env python3
"""cuDNN's plug-in step by step on a GPU machine (run-all's cudnn-diagnose stage):

    cudnn_diagnose.py <build>/plugins/libfp_cudnn_sdpa.so

calls the plug-in's fp_cudnn_sdpa_diagnose() (plugin/subjects/cudnn_sdpa_diagnose.cpp), which prints
the CUDA context it made, which cuDNN it loaded (FLASHPROBE_CUDNN_LIB), whether its sub-libraries and
NVRTC load, and for each of its fixed problems every backend descriptor's status as it happens, what
heuristics and the engines by global index gave and the plan.

The call runs in a child process (this script again, with --child) with Python's faulthandler on, so
that a crash inside cuDNN is said loudly - the signal, the last step printed before it, the C
function - instead of ending the stage with a bare rc 139 (as on an H100, 2026-11-26).

Exit 0 when every fixed problem got a plan, 1 when one did not (or cuDNN did not load), 2 on bad
input, 3 when the diagnostic crashed (a signal)."""
import ctypes
import faulthandler
import os
import signal
import subprocess
import sys

# The C entry points this script calls: name -> (restype, argtypes), as declared in
# plugin/subjects/cudnn_sdpa_diagnose.h (tests/scripts/test_cudnn_diagnose.py compares the two).
SIGNATURES = {"fp_cudnn_sdpa_diagnose": (ctypes.c_int, [])}


def bind(lib, name):
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = SIGNATURES[name]
    return fn


def child(path):
    faulthandler.enable(all_threads=True)
    try:
        lib = ctypes.CDLL(path)
        diagnose = bind(lib, "fp_cudnn_sdpa_diagnose")
    except (OSError, AttributeError) as e:
        print(f"cudnn_diagnose.py: {path}: {e}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    # The fixed problems that got no plan (-1: cuDNN did not load); it prints the count itself.
    return 0 if diagnose() == 0 else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "--child":
        return child(argv[2])
    if len(argv) != 2:
        print("usage: cudnn_diagnose.py <path of libfp_cudnn_sdpa.so>", file=sys.stderr)
        return 2
    path = argv[1]
    if not os.path.isfile(path):
        print(f"cudnn_diagnose.py: {path}: no such file (the cuDNN plug-in, built where cudnn_graph.h is)", file=sys.stderr)
        return 2
    sys.stdout.flush()
    # The child writes to our stdout and stderr directly: its lines are on the page as it prints them.
    rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--child", path])
    if rc < 0:
        sig = -rc
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        print(f"\ncudnn_diagnose.py: the diagnostic CRASHED with {name} ({sig}) inside the plug-in or cuDNN, after the last "
              f"line above (the step it had reached; the Python stack above names the call). Not a verdict about cuDNN's "
              f"plans: see plugin/subjects/CUDNN_NOTES.md", file=sys.stderr)
        return 3
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
