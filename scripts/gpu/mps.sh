# The CUDA MPS daemon for scripts that run many CUDA processes on one GPU at once (scripts/gpu/soak).
# Under MPS the processes share one server context instead of one context each; on the H100 the
# soak's 6 processes ran 1,314 cases/s with it against 973-1,052 at 8 and 4 without
# (reports/data/h100-80gb-hbm3/2026-11-27-soak-ec0c125/, measured).
# Sourced. mps_up MODE LOGDIR PROBE... decides and sets, for the record:
#   MPS_ON   1 when the processes run under MPS, else 0
#   MPS_HOW  one line: what was found, started or refused, and why
# and exports CUDA_MPS_PIPE_DIRECTORY for the processes started after it. MODE:
#   auto  use a daemon that answers at $CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps), else start
#         one with its own pipe folder (under /tmp) and log folder (LOGDIR) when nvidia-cuda-mps-control
#         exists; go on without MPS when it does not, or when the daemon fails
#   1     the same, but every such failure is an error (mps_up returns 2, MPS_HOW says why)
#   0     no MPS: the processes get an empty pipe folder, so a daemon already running is not used either
# PROBE is a command (one CUDA process) run under the daemon before the work: MPS counts as on only
# when it passed and the daemon then lists a server. mps_down stops the daemon mps_up started, and
# nothing else (a daemon found running is left as it was). FLASHPROBE_MPS_CONTROL names the control
# program (default nvidia-cuda-mps-control).
MPS_ON=0 MPS_HOW="" MPS_STARTED=0 MPS_PIPE="" MPS_EMPTY=""

mps_ctl() {  # control command on stdin, against $MPS_PIPE; never waits long
  CUDA_MPS_PIPE_DIRECTORY=$MPS_PIPE timeout 20 "${FLASHPROBE_MPS_CONTROL:-nvidia-cuda-mps-control}" 2>&1
}

mps_fail() {  # MODE why: off, or an error when MPS was required
  MPS_HOW=$2
  mps_down
  if [ "$1" = 1 ]; then return 2; fi
  MPS_HOW="off: $2"
  mps_none
}

mps_none() {  # the processes' pipe folder: an empty one, where no daemon answers
  MPS_EMPTY=$(mktemp -d /tmp/fp-nompsXXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$MPS_EMPTY
}

mps_up() {  # MODE LOGDIR PROBE...
  local mode=$1 logdir=$2 ctl=${FLASHPROBE_MPS_CONTROL:-nvidia-cuda-mps-control} rc servers
  shift 2
  if [ "$mode" = 0 ]; then
    MPS_HOW="off (FLASHPROBE_SOAK_MPS=0)"
    mps_none
    return 0
  fi
  command -v "$ctl" > /dev/null || { mps_fail "$mode" "$ctl is not installed"; return; }
  MPS_PIPE=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
  local found="found running at $MPS_PIPE (left running)"
  if ! echo get_server_list | mps_ctl > /dev/null; then
    MPS_PIPE=$(mktemp -d /tmp/fp-mpsXXXXXX)
    mkdir -p "$logdir"
    CUDA_MPS_PIPE_DIRECTORY=$MPS_PIPE CUDA_MPS_LOG_DIRECTORY=$logdir "$ctl" -d > "$logdir/start.txt" 2>&1 < /dev/null
    rc=$?
    ((rc == 0)) || { rm -rf "$MPS_PIPE"; mps_fail "$mode" "$ctl -d exited $rc ($(head -c 200 "$logdir/start.txt"))"; return; }
    MPS_STARTED=1
    found="started by the soak (pipe $MPS_PIPE, log $logdir)"
  fi
  export CUDA_MPS_PIPE_DIRECTORY=$MPS_PIPE
  "$@"
  rc=$?
  ((rc == 0)) || { mps_fail "$mode" "daemon $found, but a one-case probe under it exited $rc"; return; }
  servers=$(echo get_server_list | mps_ctl | tr -s ' \n' ' ')
  [[ $servers =~ [0-9] ]] || { mps_fail "$mode" "daemon $found, but it lists no server after the probe"; return; }
  MPS_ON=1
  MPS_HOW="on: daemon $found, server ${servers% }"
}

mps_down() {
  [ -z "$MPS_EMPTY" ] || rm -rf "$MPS_EMPTY"
  MPS_EMPTY=""
  ((MPS_STARTED)) || return 0
  echo quit | mps_ctl > /dev/null
  rm -rf "$MPS_PIPE"
  MPS_STARTED=0
}
