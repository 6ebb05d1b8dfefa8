#!/usr/bin/env python3
"""cuDNN's plug-in step by step on a GPU machine (run-all's cudnn-diagnose stage):

    cudnn_diagnose.py <build>/plugins/libfp_cudnn_sdpa.so

calls the plug-in's fp_cudnn_sdpa_diagnose() (plugin/subjects/cudnn_sdpa_diagnose.cpp), which prints
which cuDNN it loaded (FLASHPROBE_CUDNN_LIB), whether its sub-libraries and NVRTC load, and for each of
its fixed problems every backend descriptor's status, what heuristics and the engines by global index
gave and the plan. Exit 0 when every fixed problem got a plan, 1 when one did not, 2 on bad input."""
import ctypes
import os
import sys


def main(argv):
    if len(argv) != 2:
        print("usage: cudnn_diagnose.py <path of libfp_cudnn_sdpa.so>", file=sys.stderr)
        return 2
    path = argv[1]
    if not os.path.isfile(path):
        print(f"cudnn_diagnose.py: {path}: no such file (the cuDNN plug-in, built where cudnn_graph.h is)", file=sys.stderr)
        return 2
    try:
        lib = ctypes.CDLL(path)
        diagnose = lib.fp_cudnn_sdpa_diagnose
    except (OSError, AttributeError) as e:
        print(f"cudnn_diagnose.py: {path}: {e}", file=sys.stderr)
        return 2
    diagnose.restype = ctypes.c_int
    sys.stdout.flush()
    # The fixed problems that got no plan (-1: cuDNN did not load); it prints the count itself.
    return 0 if diagnose() == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
