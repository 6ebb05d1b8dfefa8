#include "bench/bench_grid.h"

#include <nlohmann/json.hpp>

#include "flashprobe/core/dtype.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::bench {

double BenchCase::flops() const {
  if (group == "custom") {
    double pairs = 0;
    for (int b = 0; b < p.batch; ++b)
      for (int i = 0; i < p.sq; ++i) {
        std::int64_t lo, hi;
        p.visible_range(b, i, lo, hi);
        if (hi >= lo) pairs += double(hi - lo + 1);
      }
    return 2.0 * (p.d + p.dv) * p.hq * pairs;
  }
  double f = 2.0 * p.batch * p.hq * double(p.sq) * double(p.sk) * (p.d + p.dv);
  if (p.causal != Causal::none && p.sq == p.sk) f /= 2;
  return f;
}

double BenchCase::bytes() const {
  const double in = double(dtype_size(p.dtype));
  const double q = double(p.batch) * p.sq * p.hq * p.d * in;
  const double kv = double(p.batch) * p.sk * p.hkv * (p.d + p.dv) * in;
  const double o = double(p.batch) * p.sq * p.hq * p.dv * double(dtype_size(p.out_dtype));
  return q + kv + o + double(p.lse_size()) * 4;
}

double BenchCase::backward_bytes() const {
  const double in = double(dtype_size(p.dtype));
  const double q = double(p.batch) * p.sq * p.hq * p.d * in;
  const double kv = double(p.batch) * p.sk * p.hkv * (p.d + p.dv) * in;
  const double o = double(p.batch) * p.sq * p.hq * p.dv * double(dtype_size(p.out_dtype));
  return 2 * (q + kv) + 2 * o + double(p.lse_size()) * 4;
}

std::vector<BenchCase> bench_grid(bool quick) {
  std::vector<BenchCase> v;
  const std::vector<int> seqs = quick ? std::vector<int>{1024, 4096} : std::vector<int>{512, 1024, 2048, 4096, 8192, 16384};
  for (DType t : {DType::f16, DType::bf16})
    for (int d : {64, 128})
      for (bool causal : {false, true})
        for (int s : seqs) {
          AttnProblem p;
          p.dtype = p.out_dtype = t;
          p.d = p.dv = d;
          p.hq = p.hkv = 2048 / d;
          p.sq = p.sk = s;
          p.batch = 16384 / s;
          p.causal = causal ? Causal::bottom_right : Causal::none;
          v.push_back({"prefill", p});
        }
  for (DType t : {DType::f16, DType::bf16})
    for (int b : {1, 4}) {
      AttnProblem p;
      p.dtype = p.out_dtype = t;
      p.batch = b;
      p.hq = p.hkv = 16;
      p.sq = p.sk = 1500;
      p.d = p.dv = 64;
      v.push_back({"whisper", p});
    }
  const std::vector<int> keys = quick ? std::vector<int>{4096, 32768} : std::vector<int>{1024, 2048, 4096, 8192, 16384, 32768};
  for (DType t : {DType::f16, DType::bf16})
    for (int b : {1, 8})
      for (int sk : keys) {
        AttnProblem p;
        p.dtype = p.out_dtype = t;
        p.batch = b;
        p.hq = p.hkv = 32;
        p.sq = 1;
        p.sk = sk;
        p.d = p.dv = 128;
        v.push_back({"decode", p});
      }
  return v;
}

std::vector<BenchCase> headdim_grid() {
  std::vector<std::pair<int, int>> dims;
  for (int d = kernels::kHeadDimStep; d <= 256; d += kernels::kHeadDimStep) dims.emplace_back(d, d);
  for (auto dd : {std::pair{192, 128}, std::pair{160, 128}, std::pair{128, 192}, std::pair{64, 128}}) dims.push_back(dd);
  std::vector<BenchCase> v;
  for (DType t : {DType::f16, DType::bf16})
    for (bool causal : {false, true})
      for (auto [d, dv] : dims) {
        AttnProblem p;
        p.dtype = p.out_dtype = t;
        p.d = d;
        p.dv = dv;
        p.batch = 4;
        p.hq = p.hkv = 16;
        p.sq = p.sk = 4096;
        p.causal = causal ? Causal::bottom_right : Causal::none;
        v.push_back({"headdim", p});
      }
  return v;
}

std::vector<HeadDimRatio> headdim_ratios(const nlohmann::json& results) {
  struct Timed {
    std::string kernel, dtype;
    bool causal;
    int d, dv;
    double tflops;
  };
  std::vector<Timed> t;
  for (const auto& r : results) {
    if (r.value("group", "") != "headdim") continue;
    const AttnProblem p = r.at("problem").get<AttnProblem>();
    t.push_back({r.at("kernel").get<std::string>(), std::string(dtype_name(p.dtype)), p.causal != Causal::none, p.d, p.dv,
                 r.at("tflops").get<double>()});
  }
  std::vector<HeadDimRatio> out;
  for (const Timed& x : t) {
    const std::string base = x.kernel.substr(0, x.kernel.find('/'));
    // (the class the kernel runs the head dim in: mma the fine ladder, mma/classes=coarse the other;
    // the headdim group has no soft-cap or ALiBi)
    const bool coarse = x.kernel.find("classes=coarse") != std::string::npos;
    const bool fine = x.kernel.find("classes=fine") != std::string::npos;  // wgmma/classes=fine
    const kernels::HeadDimClass cls = base == "mma"     ? kernels::mma_nvidia_class(x.d, x.dv, false, coarse)
                                      : base == "wgmma" ? kernels::wgmma_class(x.d, x.dv, fine)
                                                        : kernels::HeadDimClass{};
    if (!cls || (x.d == cls.d && x.dv == cls.dv)) continue;
    for (const Timed& y : t)
      if (y.kernel == x.kernel && y.dtype == x.dtype && y.causal == x.causal && y.d == cls.d && y.dv == cls.dv) {
        out.push_back({x.kernel, x.dtype, x.causal, x.d, x.dv, cls.d, cls.dv, x.tflops, y.tflops, x.tflops / y.tflops});
        break;
      }
  }
  return out;
}

std::vector<BenchCase> custom_cases(const std::vector<std::string>& files) {
  std::vector<BenchCase> v;
  for (const auto& f : files) {
    const nlohmann::json j = read_json_file(f);
    const auto add = [&](const nlohmann::json& e, const std::string& where) {
      AttnProblem p;
      try {
        from_json(e, p);
        require_valid(p);
      } catch (const UsageError& err) {
        throw UsageError("--problem " + where + ": " + err.what());
      }
      v.push_back({"custom", p});
    };
    if (j.is_array()) {
      if (j.empty()) throw UsageError("--problem " + f + ": an empty array (expected problem objects)");
      for (std::size_t i = 0; i < j.size(); ++i) add(j[i], f + "[" + std::to_string(i) + "]");
    } else {
      add(j, f);
    }
  }
  return v;
}

}  // namespace flashprobe::bench
