#!/usr/bin/env python3
"""scripts/gpu/soak counts what the shards really passed: a stand-in test binary prints RapidCheck's
lines (passes, a falsified property, a crash, a skip) and the record must say exactly that."""
import json
import os
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
runner=per-case; [ "${FLASHPROBE_CASE_ARENA:-0}" = 1 ] && runner=arena
printf '{"schema":"flashprobe.prop_throughput/1","commit":"c0ffee","device":{"name":"Fake GPU"},"rows":[{"kernel":"%s","cases":%s,"seconds":1.5,"oracle_s":1.0,"kernel_s":0.25,"runner":"%s"}]}' "$k" "$n" "$runner" > "$FLASHPROBE_RECORD_DIR/prop_throughput.json"
"""


class Soak(unittest.TestCase):
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
                   FLASHPROBE_SOAK_JOBS="2", FLASHPROBE_SOAK_SEED="1000")
        env.update(extra)
        work = os.path.join(tmp, "work")
        self.work = work
        p = subprocess.run([SOAK, work], env=env, capture_output=True, text=True)
        rec_path = os.path.join(work, "prop_soak.json")
        rec = None
        if os.path.exists(rec_path):
            with open(rec_path) as f:
                rec = json.load(f)
        return p, rec

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

    def shard_logs(self):
        d = os.path.join(self.work, "soak")
        for name in sorted(os.listdir(d)):
            if os.path.isdir(os.path.join(d, name)):
                with open(os.path.join(d, name, "log.txt")) as f:
                    yield f.read()

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
        # FLASHPROBE_CASE_ARENA=1 goes through to every shard (the binary picks its runner from it) and
        # the record says which runner each row and the whole soak ran on.
        p, rec = self.run_soak("good:f16 gate:bf16", cases=4, shards=2, FLASHPROBE_CASE_ARENA="1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("arena runner", p.stdout)
        self.assertEqual(rec["runner"], "arena")
        self.assertEqual(rec["rows"][0]["runner"], "arena")
        p, rec = self.run_soak("good:f16", cases=4, shards=2)
        self.assertEqual(rec["runner"], "per-case")
        self.assertIn("per-case runner", p.stdout)

    def test_bad_settings_exit_2_naming_the_value(self):
        for key, value in (("FLASHPROBE_SOAK_TIMEOUT", "ten"), ("FLASHPROBE_SOAK_SEED", "-1"),
                           ("FLASHPROBE_ORACLE_THREADS", "0"), ("FLASHPROBE_CASE_ARENA", "yes")):
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
