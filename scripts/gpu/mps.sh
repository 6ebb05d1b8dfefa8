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
# program (default nvidia-cuda-mps-control); FLASHPROBE_MPS_WAIT_S (default 20) how long the daemon
# may take to answer after its start and to exit after quit before the script ends it.
# The daemon runs in the foreground (-f) as a background job of the sourcing shell, which waits for
# it in mps_down: its exit status is collected here. Started with -d it forked away from the script,
# and on a machine whose PID 1 does not reap orphans its exit left a <defunct> entry
# (reports/data/h100-80gb-hbm3/2026-11-27-soak-fb56b67/). In -f mode the daemon and its server log to
# its stdout, kept as LOGDIR/control-f.txt (no control.log or server.log; measured on the H100 at
# 974195e, where the soak collected it and left no MPS process: reports/data/h100-80gb-hbm3/2026-11-27-mps-974195e/).
MPS_ON=0 MPS_HOW="" MPS_STARTED=0 MPS_PIPE="" MPS_EMPTY="" MPS_PID="" MPS_WHY=""

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
    MPS_STARTED=1
    mps_start "$ctl" "$logdir" || { mps_fail "$mode" "$MPS_WHY"; return; }
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

mps_wait_s() {  # FLASHPROBE_MPS_WAIT_S, checked
  local w=${FLASHPROBE_MPS_WAIT_S:-20}
  [[ $w =~ ^[1-9][0-9]*$ ]] || { echo "mps: FLASHPROBE_MPS_WAIT_S = '$w' must be a positive integer (seconds); using 20" >&2; w=20; }
  echo "$w"
}

mps_alive() {  # the daemon this shell started still runs (an exited child not yet reaped does not)
  [ -n "$MPS_PID" ] && kill -0 "$MPS_PID" 2> /dev/null && ! grep -qs '^State:[[:space:]]*Z' "/proc/$MPS_PID/status"
}

mps_start() {  # CTL LOGDIR: the control daemon in the foreground as this shell's job; 0 once it answers,
               # else 1 with MPS_WHY (it exited, or did not answer in time and was ended and reaped)
  local ctl=$1 logdir=$2 i=0 n rc
  n=$(( $(mps_wait_s) * 10 ))
  CUDA_MPS_PIPE_DIRECTORY=$MPS_PIPE CUDA_MPS_LOG_DIRECTORY=$logdir "$ctl" -f < /dev/null > "$logdir/control-f.txt" 2>&1 &
  MPS_PID=$!
  while ((i++ < n)); do
    if ! mps_alive; then
      wait "$MPS_PID"; rc=$?
      MPS_PID=""
      MPS_WHY="$ctl -f exited $rc ($(head -c 200 "$logdir/control-f.txt"))"
      return 1
    fi
    echo get_server_list | mps_ctl > /dev/null && return 0
    sleep 0.1
  done
  MPS_WHY="$ctl -f did not answer within $((n / 10)) s"
  return 1
}

mps_reap() {  # waits for the daemon this shell started to exit, ends it if it does not in time, collects it
  local i=0 n
  [ -n "$MPS_PID" ] || return 0
  n=$(( $(mps_wait_s) * 10 ))
  while mps_alive && ((i++ < n)); do sleep 0.1; done
  if mps_alive; then
    echo "mps: the control daemon (pid $MPS_PID) still ran $((n / 10)) s after quit: ended with SIGTERM" >&2
    kill "$MPS_PID" 2> /dev/null
    i=0
    while mps_alive && ((i++ < 50)); do sleep 0.1; done
    mps_alive && kill -KILL "$MPS_PID" 2> /dev/null
  fi
  wait "$MPS_PID" 2> /dev/null
  MPS_PID=""
}

mps_down() {
  [ -z "$MPS_EMPTY" ] || rm -rf "$MPS_EMPTY"
  MPS_EMPTY=""
  ((MPS_STARTED)) || return 0
  echo quit | mps_ctl > /dev/null
  mps_reap
  rm -rf "$MPS_PIPE"
  MPS_STARTED=0
}
