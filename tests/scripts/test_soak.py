#!/usr/bin/env python3
"""scripts/gpu/soak counts what the shards really passed: a stand-in test binary prints RapidCheck's
lines (passes, a falsified property, a crash, a skip) and the record must say exactly that."""
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOAK = os.path.join(ROOT, "scripts", "gpu", "soak")

# The stand-in reads the same environment a real shard gets. Behaviour by kernel name:
#   good   passes every case        flaky  falsified in the shard with seed ending in 1
#   crash  dies in shard seed ...2  skip   skips (kernel takes no such dtype) for bf16
#   gate   prints the gate's own count line only ("cases K/P: N run, passed"), as test_kernel_props does
FAKE = r"""#!/usr/bin/env bash
filter=${1#--gtest_filter=Kernels/KernelProps.Holds/}
k=${filter%%_*}
n=$FLASHPROBE_PROP_CASES
echo "[ RUN      ] $1"
echo "oracle threads ${FLASHPROBE_ORACLE_THREADS:-unset}"
# The CUDA driver's side of MPS: a client finds the daemon in its pipe folder and gets a server.
if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ]; then
  echo "mps daemon at $CUDA_MPS_PIPE_DIRECTORY"
  [ -n "${FAKE_MPS_NO_SERVER:-}" ] || echo 4242 > "$CUDA_MPS_PIPE_DIRECTORY/server"
  [ -n "${FAKE_MPS_PROBE_FAILS:-}" ] && [ "$n" = 1 ] && { echo "cudaErrorMpsConnectionFailed"; exit 1; }
else
  echo "mps none"
fi
case "$k:$FLASHPROBE_PROP_DTYPE:$FLASHPROBE_PROP_SEED" in
  flaky:*1)
    echo "Falsifiable after 7 tests and 3 shrinks"; echo "case b1-sq1-sk3"
    echo 'RC_PARAMS="reproduce=abc"'; exit 1 ;;
  crash:*2) echo "Segmentation fault"; exit 139 ;;
  skip:bf16:*) echo "time skip/AgreesWithOracle: skipped (takes no bf16 inputs (FLASHPROBE_PROP_DTYPE))"
              echo "[  SKIPPED ] skip takes no bf16"; exit 0 ;;
  gate:*) echo "cases gate/AgreesWithOracle: $n run, passed"; exit 0 ;;
esac
echo "OK, passed $n tests"
runner=per-case; [ "${FLASHPROBE_CASE_ARENA:-0}" = 1 ] && runner=arena  # the binary's own default
# The gate's cases per path of the kernel (its tile classes): "nowide" never draws its 256 class,
# "somewide" draws it in the shards with an odd seed only.
paths=""
case $k in
  nowide) paths=',"paths":{"class 64/64":'$n',"class 256/256":0}' ;;
  somewide) paths=',"paths":{"class 64/64":'$n',"class 256/256":'$((FLASHPROBE_PROP_SEED % 2))'}' ;;
esac
printf '{"schema":"flashprobe.prop_throughput/1","commit":"c0ffee","device":{"name":"Fake GPU"},"rows":[{"kernel":"%s","cases":%s,"seconds":1.5,"oracle_s":1.0,"kernel_s":0.25,"runner":"%s"%s}]}' "$k" "$n" "$runner" "$paths" > "$FLASHPROBE_RECORD_DIR/prop_throughput.json"
"""

# A stand-in for nvidia-cuda-mps-control, a daemon that lives while its pipe folder holds "control":
#   -f  runs it in the foreground until a client's quit removes that file (then logs "exit")
#   -d  the same daemon forked into the background, the starter returning at once, as the real -d does:
#       the daemon is then nobody's child but the orphans' reaper's
# and as a client, on stdin, get_server_list (the servers its clients made) and quit; every call is
# logged. FAKE_MPS_START_FAILS: the start fails; FAKE_MPS_MUTE: the daemon never answers;
# FAKE_MPS_IGNORES_QUIT: quit is logged but the daemon stays (until SIGTERM).
FAKE_MPS = r"""#!/usr/bin/env bash
d=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
daemon() {  # on SIGTERM it ends after its current sleep (collected), as a daemon stops its server first
  trap 'echo "terminated pipe=$d" >> "$FAKE_MPS_CALLS"; exit 143' TERM
  [ -n "${FAKE_MPS_MUTE:-}" ] || touch "$d/control"
  while [ -e "$d/control" ] || [ -n "${FAKE_MPS_MUTE:-}" ]; do sleep 0.05; done
  echo "exit pipe=$d" >> "$FAKE_MPS_CALLS"
}
if [ "${1:-}" = -d ] || [ "${1:-}" = -f ]; then
  echo "start $1 pipe=$d log=${CUDA_MPS_LOG_DIRECTORY:-}" >> "$FAKE_MPS_CALLS"
  [ -n "${FAKE_MPS_START_FAILS:-}" ] && { echo "An instance of this daemon is already running"; exit 1; }
  if [ "$1" = -f ]; then daemon; exit 0; fi
  daemon < /dev/null > /dev/null 2>&1 &
  exit 0
fi
[ -e "$d/control" ] || { echo "Cannot find MPS control daemon process"; exit 1; }
read -r cmd
echo "$cmd pipe=$d" >> "$FAKE_MPS_CALLS"
case $cmd in
  get_server_list) cat "$d/server" 2>/dev/null || true ;;
  quit) [ -n "${FAKE_MPS_IGNORES_QUIT:-}" ] || rm -f "$d/control" "$d/server" ;;
esac
"""

PR_SET_CHILD_SUBREAPER = 36  # prctl(2)


def orphans_after(run):
    """Runs run() with this process as the reaper of orphaned descendants (as PID 1 or a subreaper is
    on the GPU machine) and returns the pids this process had to reap afterwards: a process the soak
    started and did not collect itself, which a machine whose PID 1 does not reap shows as <defunct>.
    Waits up to 5 s for such a process to exit (one still running afterwards is returned too)."""
    import ctypes, time
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    reaped = []
    try:
        result = run()
        deadline = time.time() + 5
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return result, reaped
            if pid:
                reaped.append(pid)
            elif time.time() > deadline:
                return result, reaped + ["still running"]
            else:
                time.sleep(0.05)
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


class SoakRun:
    def run_soak(self, soak_set, cases=30, shards=3, **extra):
        tmp = tempfile.mkdtemp()
        carry = os.path.join(tmp, "carry")
        os.makedirs(os.path.join(carry, "tests"))
        fake = os.path.join(carry, "tests", "test_kernel_props")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        env = dict(os.environ, FLASHPROBE_CARRY=carry, FLASHPROBE_SOAK_SET=soak_set,
                   FLASHPROBE_SOAK_CASES=str(cases), FLASHPROBE_SOAK_SHARDS=str(shards),
                   FLASHPROBE_SOAK_JOBS="2", FLASHPROBE_SOAK_SEED="1000",
                   FLASHPROBE_MPS_CONTROL=os.path.join(tmp, "no-mps-control-here"))
        for k in ("CUDA_MPS_PIPE_DIRECTORY", "FLASHPROBE_CASE_ARENA", "FLASHPROBE_SOAK_MPS"):
            env.pop(k, None)
        env.update(extra)
        env = {k: v for k, v in env.items() if v is not None}  # None: the setting left unset
        work = os.path.join(tmp, "work")
        self.work = work
        p = subprocess.run([SOAK, work], env=env, capture_output=True, text=True)
        rec_path = os.path.join(work, "prop_soak.json")
        rec = None
        if os.path.exists(rec_path):
            with open(rec_path) as f:
                rec = json.load(f)
        return p, rec

    def shard_logs(self):
        d = os.path.join(self.work, "soak")
        for name in sorted(os.listdir(d)):
            if re.match(r"^[a-z0-9_]+-[a-z0-9]+-[0-9]+$", name):  # a shard's folder (kernel-dtype-shard)
                with open(os.path.join(d, name, "log.txt")) as f:
                    yield f.read()


class Soak(SoakRun, unittest.TestCase):
    def test_all_passing_counts_every_shard(self):
        p, rec = self.run_soak("good:f16,bf16", cases=31, shards=3)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = {(r["kernel"], r["dtype"]): r for r in rec["rows"]}
        self.assertEqual(rows[("good", "f16")]["cases"], 33)  # 3 shards of ceil(31/3) = 11
        self.assertEqual(rows[("good", "bf16")]["failures"], 0)
        self.assertEqual(rec["total_cases"], 66)
        self.assertEqual(rec["commit"] or "c0ffee", "c0ffee")
        self.assertAlmostEqual(rows[("good", "f16")]["ledger_s"]["oracle_s"], 3.0)
        self.assertIn("soak good/f16/AgreesWithOracle: run 33 cases, skipped 0 of 3 shards, failed 0", p.stdout)
        self.assertIn("soak: run 66 cases, skipped 0 of 2 kernel x dtype, failed 0", p.stdout)

    def test_a_path_of_the_kernel_without_cases_fails_the_run_and_is_named(self):
        # A tile class the kernel takes that no shard's cases reached (the ledger's "paths") is a part of the
        # kernel the soak did not exercise: exit 1, named in the row and the line. Summed over the shards, a
        # class one shard reached is exercised.
        p, rec = self.run_soak("nowide:f16 somewide:f16", cases=30, shards=3)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        rows = {r["kernel"]: r for r in rec["rows"]}
        self.assertEqual(rows["nowide"]["paths_without_cases"], ["class 256/256"])
        self.assertEqual(rows["nowide"]["paths"], {"class 64/64": 30, "class 256/256": 0})
        self.assertEqual(rows["somewide"]["paths_without_cases"], [])
        self.assertGreater(rows["somewide"]["paths"]["class 256/256"], 0)
        self.assertIn("soak nowide/f16/AgreesWithOracle: run 30 cases, skipped 0 of 3 shards, failed 0; ", p.stdout)
        self.assertIn("NO CASE in class 256/256", p.stdout)
        p, rec = self.run_soak("somewide:f16", cases=30, shards=3)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_the_gates_own_count_line_is_read(self):
        p, rec = self.run_soak("gate:f16", cases=12, shards=3)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(rec["rows"][0]["cases"], 12)

    def test_a_falsified_shard_fails_the_run_with_its_reproduction(self):
        p, rec = self.run_soak("good:f16 flaky:f16", cases=30, shards=3)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(len(rec["failures"]), 1)
        f = rec["failures"][0]
        self.assertEqual((f["kernel"], f["why"], f["falsified_after"], f["shrinks"]), ("flaky", "property falsified", 7, 3))
        self.assertEqual(f["reproduce"], 'RC_PARAMS="reproduce=abc"')
        flaky = [r for r in rec["rows"] if r["kernel"] == "flaky"][0]
        self.assertEqual(flaky["cases"], 10 + 6 + 10)  # the failing shard passed 6 before its counterexample

    def test_a_crash_is_a_failure_and_leaves_the_kernel_short(self):
        p, rec = self.run_soak("crash:f16", cases=30, shards=3)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(rec["failures"][0]["why"], "crashed or errored")
        self.assertEqual(rec["rows"][0]["cases"], 20)
        self.assertIn("FAILED", p.stdout)

    def test_a_skip_is_counted_as_skipped_with_its_reason_and_never_as_a_pass(self):
        p, rec = self.run_soak("skip:f16,bf16", cases=9, shards=3)
        self.assertEqual(p.returncode, 1, p.stdout)
        rows = {r["dtype"]: r for r in rec["rows"]}
        self.assertTrue(rows["bf16"]["skipped"])
        self.assertEqual((rows["bf16"]["cases"], rows["bf16"]["shards_skipped"]), (0, 3))
        self.assertEqual(rows["bf16"]["skip_reasons"], ["takes no bf16 inputs (FLASHPROBE_PROP_DTYPE)"])
        self.assertEqual(rows["f16"]["cases"], 9)
        self.assertEqual(rec["rows_skipped"], 1)
        self.assertIn("SKIPPED (takes no bf16 inputs (FLASHPROBE_PROP_DTYPE))", p.stdout)
        self.assertIn("soak: run 9 cases, skipped 1 of 2 kernel x dtype, failed 0", p.stdout)

    def test_shards_after_the_deadline_are_not_run_and_leave_the_kernel_short(self):
        import time
        p, rec = self.run_soak("good:f16", cases=9, shards=3, FLASHPROBE_SOAK_UNTIL=str(int(time.time()) + 5))
        self.assertEqual(p.returncode, 1, p.stdout)
        row = rec["rows"][0]
        self.assertEqual((row["cases"], row["shards_not_run"], row["failures"]), (0, 3, 0))
        self.assertIn("SHORT (3 shards not run)", p.stdout)

    def test_each_shard_gets_its_share_of_the_cores_for_the_oracle(self):
        # The shards fill the cores: each one's oracle gets cores / processes threads, at least 1, so
        # that the oracle's own threads do not contend with the other shards.
        p, _ = self.run_soak("good:f16", cases=4, shards=2)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        want = max(1, len(os.sched_getaffinity(0)) // 2)  # nproc; FLASHPROBE_SOAK_JOBS=2
        self.assertIn(f"{want} oracle thread(s) each", p.stdout)
        for log in self.shard_logs():
            self.assertIn(f"oracle threads {want}\n", log)
        p, _ = self.run_soak("good:f16", cases=4, shards=2, FLASHPROBE_ORACLE_THREADS="3")
        for log in self.shard_logs():
            self.assertIn("oracle threads 3\n", log)

    def test_the_runner_reaches_the_shards_and_the_record(self):
        # The case arena is the soak's default (the binary's own default is the per-case runner, so the
        # soak must pass it on); FLASHPROBE_CASE_ARENA=0 runs the per-case runner. The record says which
        # runner each row and the whole soak ran on.
        p, rec = self.run_soak("good:f16 gate:bf16", cases=4, shards=2)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("arena runner", p.stdout)
        self.assertEqual(rec["runner"], "arena")
        self.assertEqual(rec["rows"][0]["runner"], "arena")
        p, rec = self.run_soak("good:f16", cases=4, shards=2, FLASHPROBE_CASE_ARENA="0")
        self.assertEqual(rec["runner"], "per-case")
        self.assertIn("per-case runner", p.stdout)

    def test_the_default_processes_are_three_eighths_of_the_cores_at_most_six(self):
        # 6 on the H100's 16-core host (4, 8 and 14 measured slower), at least 1 on a small machine.
        # nproc counts OMP_NUM_THREADS as the cores.
        for cores, want in ((16, 6), (8, 3), (2, 1), (64, 6)):
            p, rec = self.run_soak("good:f16", cases=4, shards=2, FLASHPROBE_SOAK_JOBS=None, OMP_NUM_THREADS=str(cores))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn(f"{want} processes at a time on {cores} cores", p.stdout)
            self.assertEqual(rec["jobs"], want)

    def test_bad_settings_exit_2_naming_the_value(self):
        for key, value in (("FLASHPROBE_SOAK_TIMEOUT", "ten"), ("FLASHPROBE_SOAK_SEED", "-1"),
                           ("FLASHPROBE_ORACLE_THREADS", "0"), ("FLASHPROBE_CASE_ARENA", "yes"),
                           ("FLASHPROBE_SOAK_MPS", "yes")):
            p, rec = self.run_soak("good:f16", cases=3, shards=1, **{key: value})
            self.assertEqual(p.returncode, 2)
            self.assertIn(f"{key} = '{value}'", p.stderr)
            self.assertIsNone(rec)
        p, _ = self.run_soak("good:f16", cases=0, shards=1)
        self.assertEqual(p.returncode, 2)
        self.assertIn("FLASHPROBE_SOAK_CASES = '0'", p.stderr)
        env = dict(os.environ, FLASHPROBE_CARRY=os.path.join(ROOT, "does-not-exist"))
        p = subprocess.run([SOAK, tempfile.mkdtemp()], env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not built", p.stderr)
        p, _ = self.run_soak("nodtype", cases=3, shards=1)
        self.assertEqual(p.returncode, 2)
        self.assertIn("'nodtype'", p.stderr)



class SoakMps(SoakRun, unittest.TestCase):
    """The soak under the CUDA MPS daemon (scripts/gpu/mps.sh), with stand-ins for the control program
    and the driver: the record says whether MPS was on, and the soak stops only the daemon it started."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.ctl = os.path.join(self.tmp, "nvidia-cuda-mps-control")
        with open(self.ctl, "w") as f:
            f.write(FAKE_MPS)
        os.chmod(self.ctl, 0o755)
        self.calls = os.path.join(self.tmp, "calls.txt")
        open(self.calls, "w").close()

    def soak(self, **extra):
        return self.run_soak("good:f16,bf16", cases=6, shards=2, **dict({"FLASHPROBE_MPS_CONTROL": self.ctl,
                                                                          "FAKE_MPS_CALLS": self.calls}, **extra))

    def called(self):
        with open(self.calls) as f:
            return f.read()

    def test_a_daemon_is_started_used_by_every_shard_and_stopped(self):
        p, rec = self.soak()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(rec["mps"]["on"], rec["mps"])
        self.assertIn("started by the soak", rec["mps"]["how"])
        self.assertIn("server 4242", rec["mps"]["how"])
        self.assertIn("MPS on", p.stdout)
        pipe = re.search(r"^start -f pipe=(\S+) log=(\S+)$", self.called(), re.M)
        self.assertIsNotNone(pipe, self.called())
        self.assertEqual(pipe.group(2), os.path.join(self.work, "soak", "mps-log"))  # its own log folder
        logs = list(self.shard_logs())
        self.assertEqual(len(logs), 4)
        for log in logs:
            self.assertIn(f"mps daemon at {pipe.group(1)}\n", log)
        self.assertIn(f"quit pipe={pipe.group(1)}", self.called())
        self.assertIn(f"exit pipe={pipe.group(1)}", self.called())  # it quit before the soak ended
        self.assertFalse(os.path.exists(pipe.group(1)))  # its own pipe folder, removed with it

    def test_the_daemon_it_started_is_its_own_child_and_reaped_by_it(self):
        # 2026-11-27-soak-fb56b67: after the soak, `pgrep -a nvidia-cuda-mps` showed the control daemon as
        # <defunct>. Started with -d it had forked away from the soak, so its exit status went to the
        # machine's orphan reaper, which did not collect it. Here this test is that reaper: the soak must
        # leave it nothing to collect, whether the daemon quits when asked or has to be ended.
        for extra in ({}, {"FAKE_MPS_IGNORES_QUIT": "1", "FLASHPROBE_MPS_WAIT_S": "1"}):
            open(self.calls, "w").close()
            (p, rec), orphans = orphans_after(lambda: self.soak(**extra))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertTrue(rec["mps"]["on"], rec["mps"])
            self.assertEqual(orphans, [], f"{extra}: processes left to the orphans' reaper; calls: {self.called()}")
            if extra:
                self.assertIn("still ran 1 s after quit: ended with SIGTERM", p.stderr)
                self.assertIn("terminated pipe=", self.called())
            else:
                self.assertIn("exit pipe=", self.called())

    def test_a_daemon_that_never_answers_is_ended_and_reaped(self):
        (p, rec), orphans = orphans_after(lambda: self.soak(FAKE_MPS_MUTE="1", FLASHPROBE_MPS_WAIT_S="1"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(orphans, [])
        self.assertFalse(rec["mps"]["on"])
        self.assertIn("-f did not answer within 1 s", rec["mps"]["how"])
        self.assertEqual(rec["total_cases"], 12)

    def test_a_daemon_found_running_is_used_and_left_running(self):
        pipe = os.path.join(self.tmp, "their-mps")
        os.makedirs(pipe)
        open(os.path.join(pipe, "control"), "w").close()
        p, rec = self.soak(CUDA_MPS_PIPE_DIRECTORY=pipe)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(rec["mps"]["on"])
        self.assertIn(f"found running at {pipe} (left running)", rec["mps"]["how"])
        self.assertNotIn("start", self.called())
        self.assertNotIn("quit", self.called())
        self.assertTrue(os.path.exists(os.path.join(pipe, "control")))

    def test_off_means_no_daemon_even_one_that_runs(self):
        pipe = os.path.join(self.tmp, "their-mps")
        os.makedirs(pipe)
        open(os.path.join(pipe, "control"), "w").close()
        p, rec = self.soak(CUDA_MPS_PIPE_DIRECTORY=pipe, FLASHPROBE_SOAK_MPS="0")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(rec["mps"], {"on": False, "how": "off (FLASHPROBE_SOAK_MPS=0)"})
        self.assertIn("MPS off", p.stdout)
        self.assertEqual(self.called(), "")
        for log in self.shard_logs():
            self.assertIn("mps none\n", log)

    def test_a_failing_daemon_is_stopped_and_the_soak_runs_without_it(self):
        for extra, why in (({"FAKE_MPS_PROBE_FAILS": "1"}, "a one-case probe under it exited 1"),
                           ({"FAKE_MPS_NO_SERVER": "1"}, "it lists no server after the probe"),
                           ({"FAKE_MPS_START_FAILS": "1"}, "-f exited 1 (An instance of this daemon is already running")):
            open(self.calls, "w").close()
            p, rec = self.soak(**extra)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertFalse(rec["mps"]["on"])
            self.assertTrue(rec["mps"]["how"].startswith("off: "), rec["mps"])
            self.assertIn(why, rec["mps"]["how"])
            self.assertEqual(rec["total_cases"], 12)
            for log in self.shard_logs():
                self.assertIn("mps none\n", log)
            if "FAKE_MPS_START_FAILS" not in extra:
                self.assertIn("quit", self.called())
            # Required, the same failure is an error naming it.
            p, rec = self.soak(FLASHPROBE_SOAK_MPS="1", **extra)
            self.assertEqual(p.returncode, 2)
            self.assertIn(why, p.stderr)
            self.assertIsNone(rec)

    def test_without_the_control_program(self):
        p, rec = self.soak(FLASHPROBE_MPS_CONTROL=os.path.join(self.tmp, "absent"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertFalse(rec["mps"]["on"])
        self.assertIn("is not installed", rec["mps"]["how"])
        p, _ = self.soak(FLASHPROBE_MPS_CONTROL=os.path.join(self.tmp, "absent"), FLASHPROBE_SOAK_MPS="1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("FLASHPROBE_SOAK_MPS=1", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
