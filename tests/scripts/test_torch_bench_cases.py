#!/usr/bin/env python3
"""reports/baselines/torch_sdpa_bench.py without PyTorch: the custom problems (--problem) are parsed,
named and counted as `flashprobe bench --problem` does, and what SDPA cannot run is refused with
exit code 2 before PyTorch is imported."""
import importlib.util, json, os, sys, tempfile, unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "reports", "baselines", "torch_sdpa_bench.py")
spec = importlib.util.spec_from_file_location("torch_sdpa_bench", SCRIPT)
tb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tb)


class CustomCases(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def write(self, name, obj):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return path

    def test_ids_match_flashprobe(self):
        # AttnProblem::id() spellings (core/src/problem.cpp), group prefix as bench adds it.
        v = tb.custom_cases([self.write("a.json", [
            {"batch": 2, "hq": 8, "hkv": 2, "sq": 128, "sk": 512, "d": 128, "dtype": "bf16"},
            {"batch": 1, "hq": 4, "hkv": 4, "sq": 64, "sk": 64, "d": 64, "causal": "bottom_right"},
            {"batch": 1, "hq": 4, "hkv": 4, "sq": 16, "sk": 64, "d": 64, "causal": "top_left", "scale": 0.125}])])
        self.assertEqual([tb.case_id(c) for c in v], [
            "custom:b2_hq8_hkv2_sq128_sk512_d128_bf16",
            "custom:b1_hq4_hkv4_sq64_sk64_d64_f16_causal",
            "custom:b1_hq4_hkv4_sq16_sk64_d64_f16_causalTL_scale0.125"])

    def test_flops_count_visible_pairs(self):
        c = tb.custom_cases([self.write("b.json", {"batch": 1, "hq": 3, "hkv": 3, "sq": 4, "sk": 4, "d": 64,
                                                    "causal": "bottom_right"})])[0]
        self.assertEqual(tb.flops(c), 4.0 * 64 * 3 * 10)  # 1 + 2 + 3 + 4 pairs
        c = tb.custom_cases([self.write("c.json", {"batch": 2, "hq": 1, "sq": 3, "sk": 5, "d": 8,
                                                    "causal": "top_left"})])[0]
        self.assertEqual(tb.flops(c), 4.0 * 8 * 2 * (1 + 2 + 3))

    def test_refusals_name_entry_and_field(self):
        cases = [([{"batch": 1, "hq": 2, "hkv": 2, "sq": 8, "sk": 8, "d": 64}, {"sq": 8, "sk": 8, "d": 64, "window_left": 4}],
                  ["[1]", "window_left"]),
                 ({"sq": 8, "sk": 16, "d": 64, "causal": "bottom_right"}, ["sq=8", "top_left"]),
                 ({"sq": 8, "sk": 8, "d": 64, "causal": True}, ["'causal' = true", "bottom_right", "top_left"]),
                 ({"batch": True, "sq": 8, "sk": 8, "d": 64}, ["'batch'=True"]),
                 ({"sq": 8, "sk": 8, "d": 64, "dtype": "f32"}, ["f32", "bf16"]),
                 ({"sq": 0, "sk": 8, "d": 64}, ["'sq'=0"]),
                 ({"hq": 6, "hkv": 4, "sq": 8, "sk": 8, "d": 64}, ["hq=6", "hkv=4"]),
                 ([], ["empty array"])]
        for n, (obj, words) in enumerate(cases):
            with self.assertRaises(ValueError) as e:
                tb.custom_cases([self.write(f"bad{n}.json", obj)])
            for w in words:
                self.assertIn(w, str(e.exception))

    def test_main_exits_2_before_importing_torch(self):
        path = self.write("d.json", {"sq": 8, "sk": 8, "d": 64, "softcap": 30})
        sys.argv = ["torch_sdpa_bench.py", "--problem", path]
        self.assertEqual(tb.main(), 2)
        sys.argv = ["torch_sdpa_bench.py", "--quick", "--problem", self.write("e.json", {"sq": 8, "sk": 8, "d": 64})]
        self.assertEqual(tb.main(), 2)
        self.assertIsNone(tb.torch)


class Backward(unittest.TestCase):
    """--backward: the cases of flashprobe bench --backward (decode left out, same ids), FLOPs 2.5x the
    forward's as BenchCase::backward_flops counts them."""

    def test_flops_are_two_and_a_half_forwards(self):
        for c in tb.grid(False):
            self.assertEqual(tb.backward_flops(c), 2.5 * tb.flops(c))
        c = dict(group="prefill", batch=1, hq=2, hkv=2, sq=128, sk=128, d=64, dtype="f16", causal=True)
        self.assertEqual(tb.backward_flops(c), 2.5 * 4.0 * 2 * 128 * 128 * 64 / 2)

    def test_a_bad_problem_exits_2_before_importing_torch(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "p.json")
        with open(path, "w") as f:
            json.dump({"sq": 8, "sk": 8, "d": 64, "window_left": 3}, f)
        sys.argv = ["torch_sdpa_bench.py", "--backward", "--problem", path]
        self.assertEqual(tb.main(), 2)
        self.assertIsNone(tb.torch)


if __name__ == "__main__":
    unittest.main()
