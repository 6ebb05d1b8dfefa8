#include "flashprobe/gate/properties.h"

#include <rapidcheck.h>

#include <cmath>
#include <cstring>

#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/kernel_domain.h"
#include "flashprobe/proptests/generators.h"
#include "flashprobe/kernels/input_fill.h"
#include "flashprobe/kernels/kv_append.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/gate/large_offsets.h"
#include "flashprobe/gate/time_ledger.h"

namespace flashprobe::gate {

using kernels::KernelInfo;
using kernels::RunResult;
using proptests::gen_case;

Case draw_case(const Domain& d) {
  Case c = *gen_case(d);
  note_case(c);
  return c;
}

KernelInfo as_drawn(const KernelInfo& k, const Case& c) { return c.splits > 0 && k.with_splits ? k.with_splits(c.splits) : k; }

oracle::CheckOptions check_options(const AttnProblem& p) {
  oracle::CheckOptions o;
  if (p.sk >= kSampledRowsFromKeys) {
    o.max_rows = kSampledRows;
    o.seed = static_cast<std::uint64_t>(p.sk);
  }
  return o;
}

namespace {

RunResult run(const Subject& s, const KernelInfo& k, const AttnProblem& p, const AttnInputs& in) {
  const Timed t(Phase::kernel);
  RunResult r = s.run(k, p, in);
  ledger_kernel_parts(r.upload_s, r.device_s, r.download_s);
  return r;
}

oracle::CheckResult timed_check(const AttnProblem& p, const AttnInputs& in, const AttnOutputs& out) {
  const Timed t(Phase::oracle);
  return oracle::check(p, in, out, check_options(p));
}

// The case's inputs: made on the device for a device subject (kernels/input_fill.h: a launch and a
// download instead of a host loop over every element), on the host for a host stand-in; the same
// bits either way (Case::make_inputs').
AttnInputs inputs_of(const Subject& s, const Case& c) {
  const Timed t(Phase::inputs);
  return s.host ? c.make_inputs() : kernels::device_counter_inputs(c.problem, c.seed, c.input_dist());
}

// The drawn case run as it is: in one go where the subject makes its own inputs (the case arena,
// its inputs filled on the device), else its inputs made, then the run. The inputs are the ones the
// kernel got.
struct Drawn {
  AttnInputs in;
  RunResult r;
};
Drawn run_drawn(const Subject& s, const Case& c) {
  const KernelInfo k = as_drawn(s.kernel, c);
  if (s.run_case) {
    const Timed t(Phase::kernel);
    CaseRun cr = s.run_case(k, c);
    ledger_kernel_parts(cr.run.upload_s, cr.run.device_s, cr.run.download_s);
    return {std::move(cr.in), std::move(cr.run)};
  }
  AttnInputs in = inputs_of(s, c);
  RunResult r = run(s, k, c.problem, in);
  return {std::move(in), std::move(r)};
}

std::string bytes_diff(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  if (a.size() != b.size()) return "sizes differ";
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return "first differing byte " + std::to_string(i) + " of " + std::to_string(a.size());
  return "";
}

// Max |x - y| over the O rows of two outputs of the same logical shape, read through their problems.
double max_row_diff(const AttnProblem& pa, const AttnOutputs& a, int row_a, const AttnProblem& pb,
                    const AttnOutputs& b, int row_b, int batch_a, int batch_b) {
  double m = 0;
  const Strides sa = pa.o_strides(), sb = pb.o_strides();
  for (int h = 0; h < pa.hq; ++h)
    for (int x = 0; x < pa.dv; ++x) {
      const double u = a.o.get(offset(sa, batch_a, row_a, h, x)), v = b.o.get(offset(sb, batch_b, row_b, h, x));
      if (std::isnan(u) || std::isnan(v)) return INFINITY;
      m = std::max(m, std::fabs(u - v));
    }
  return m;
}

}  // namespace

void prop_agrees_with_oracle(const Subject& s) {
  const Case c = draw_case(s.domain);
  RC_TAG(dtype_name(c.problem.dtype));
  RC_CLASSIFY(c.problem.sk <= 7, "Sk <= 7");
  RC_CLASSIFY(c.problem.hq != c.problem.hkv, "GQA");
  RC_CLASSIFY(c.problem.causal != Causal::none, "causal");
  const Drawn d = run_drawn(s, c);
  const oracle::CheckResult chk = timed_check(c.problem, d.in, d.r.out);
  if (!chk.pass) RC_FAIL(c.id() + ": " + chk.summary());
}

// Every problem has a sliding window (the key range still spans several tiles at its edges): the
// visible keys of a row sit far from key 0, so that whole key tiles, and a split-K decode's
// leading splits, hold no visible key. In the general domain a window is drawn for 1 problem in 5
// and the decode mutant that drops the splits after an empty one (combine_skips_empty) survived
// 1200 cases there on one run (2026-11-24). Half the windows put a bound on a key-tile edge at a
// row-tile boundary (Domain::edge_windows): an off-by-one in mma's wave skip that drops the tile
// ending at a wave's first visible key survived 150 cases of every mma property without them.
void prop_windows_agree_with_oracle(const Subject& s) {
  Domain d = s.domain;
  d.window_odds = 1;
  d.edge_windows = true;
  const Case c = draw_case(d);
  RC_TAG(dtype_name(c.problem.dtype));
  RC_CLASSIFY(c.problem.window_left >= 0, "left window");
  const Drawn dr = run_drawn(s, c);
  const oracle::CheckResult chk = timed_check(c.problem, dr.in, dr.r.out);
  if (!chk.pass) RC_FAIL(c.id() + ": " + chk.summary());
}

void prop_every_output_written(const Subject& s) {
  const Case c = draw_case(s.domain);
  const RunResult r = run_drawn(s, c).r;
  if (r.o_unwritten || r.lse_unwritten || !r.inputs_modified.empty())
    RC_FAIL(c.id() + ": " + std::to_string(r.o_unwritten) + " O and " + std::to_string(r.lse_unwritten) +
            " LSE element(s) never written (first " + r.first_unwritten + ")" +
            (r.inputs_modified.empty() ? "" : "; inputs modified: " + r.inputs_modified.front()));
}

void prop_guard_bands_intact(const Subject& s) {
  const Case c = draw_case(s.domain);
  const RunResult r = run_drawn(s, c).r;
  if (!r.guard_damage.empty()) RC_FAIL(c.id() + ": " + r.guard_damage.front());
}

void prop_finite_where_oracle_is(const Subject& s) {
  const Case c = draw_case(s.domain);
  const Drawn d = run_drawn(s, c);
  const oracle::CheckResult chk = timed_check(c.problem, d.in, d.r.out);
  if (!chk.o_metrics.nonfinite_pattern_ok)
    RC_FAIL(c.id() + ": NaN/Inf pattern differs from the oracle: " + chk.o_metrics.nonfinite_detail);
}

void prop_deterministic(const Subject& s) {
  const Case c = draw_case(s.domain);
  const AttnInputs in = inputs_of(s, c);
  const KernelInfo kc = as_drawn(s.kernel, c);
  const RunResult a = run(s, kc, c.problem, in), b = run(s, kc, c.problem, in);
  const std::string d = bytes_diff(a.out.o.bytes, b.out.o.bytes);
  if (!d.empty()) RC_FAIL(c.id() + ": O differs between two runs: " + d);
  if (std::memcmp(a.out.lse.data(), b.out.lse.data(), a.out.lse.size() * sizeof(float)) != 0)
    RC_FAIL(c.id() + ": LSE differs between two runs");
}

void prop_batch_invariant(const Subject& s) {
  Domain d = s.domain;
  auto inner = d.supports;
  d.supports = [inner](const AttnProblem& p) { return p.batch >= 2 && inner(p); };
  const Case c = draw_case(d);
  const AttnProblem& p = c.problem;
  const AttnInputs in = inputs_of(s, c);
  const int b = *rc::gen::inRange(0, p.batch);
  // The same batch element alone, contiguous BSHD, with its own key length.
  AttnProblem one = p;
  one.batch = 1;
  one.q = one.k = one.v = one.o = Strides{};
  if (!p.seqlens_k.empty()) one.seqlens_k = {p.seqlens_k[static_cast<std::size_t>(b)]};
  RC_PRE(static_cast<bool>(s.kernel.supports(s.dev, one)));
  AttnInputs solo{Tensor(p.dtype, one.q_span()), Tensor(p.dtype, one.k_span()), Tensor(p.dtype, one.v_span())};
  for (int i = 0; i < p.sq; ++i)
    for (int h = 0; h < p.hq; ++h)
      for (int x = 0; x < p.d; ++x) solo.q.set(offset(one.q_strides(), 0, i, h, x), in.q.get(offset(p.q_strides(), b, i, h, x)));
  for (int j = 0; j < p.sk; ++j)
    for (int h = 0; h < p.hkv; ++h) {
      for (int x = 0; x < p.d; ++x) solo.k.set(offset(one.k_strides(), 0, j, h, x), in.k.get(offset(p.k_strides(), b, j, h, x)));
      for (int x = 0; x < p.dv; ++x) solo.v.set(offset(one.v_strides(), 0, j, h, x), in.v.get(offset(p.v_strides(), b, j, h, x)));
    }
  const KernelInfo kc = as_drawn(s.kernel, c);
  const RunResult all = run(s, kc, p, in), alone = run(s, kc, one, solo);
  for (int i = 0; i < p.sq; ++i) {
    const double diff = max_row_diff(p, all.out, i, one, alone.out, i, b, 0);
    if (diff != 0) RC_FAIL(c.id() + ": batch element " + std::to_string(b) + " row " + std::to_string(i) +
                           " differs by " + std::to_string(diff) + " from the same element run alone");
    for (int h = 0; h < p.hq; ++h) {
      const float x = all.out.lse[static_cast<std::size_t>((std::int64_t{b} * p.hq + h) * p.sq + i)];
      const float y = alone.out.lse[static_cast<std::size_t>(std::int64_t{h} * p.sq + i)];
      if (std::memcmp(&x, &y, sizeof x) != 0)
        RC_FAIL(c.id() + ": LSE of batch element " + std::to_string(b) + " differs from the element run alone");
    }
  }
}

void prop_chunked_append_equals_prefill(const Subject& s) {
  // A cache holding `off` tokens; `n` new tokens arrive in chunks; after each chunk the new queries
  // attend (causal, bottom-right) over the cache. Must equal the rows of one prefill over all of it.
  Domain d = s.domain;
  d.seqlens = false;
  d.strides = false;
  d.windows = false;
  auto inner = d.supports;
  d.supports = [inner](const AttnProblem& p) { return p.causal == Causal::bottom_right && p.sq <= p.sk && p.sq >= 2 && inner(p); };
  const Case c = draw_case(d);
  const AttnProblem full = c.problem;  // sq new tokens at the end of sk keys
  const int off = full.sk - full.sq;
  const AttnInputs in = inputs_of(s, c);
  const KernelInfo kd = as_drawn(s.kernel, c);
  const RunResult ref = run(s, kd, full, in);
  const oracle::CheckResult ref_chk = timed_check(full, in, ref.out);
  RC_ASSERT(ref_chk.pass);
  const int chunk = *rc::gen::inRange(1, full.sq + 1);
  RC_TAG("chunk " + std::to_string(chunk));
  // The cache starts with the first `off` keys; the remainder goes in through kv_append.
  kernels::KvAppendProblem a;
  a.batch = full.batch; a.hkv = full.hkv; a.d = full.d; a.dv = full.dv; a.s_cache = full.sk; a.dtype = full.dtype;
  Tensor kc(full.dtype, full.k_span()), vc(full.dtype, full.v_span());
  for (std::int64_t i = 0; i < kc.size(); ++i) kc.set(i, 1e4);  // junk past the filled part: must never be read
  for (std::int64_t i = 0; i < vc.size(); ++i) vc.set(i, -1e4);
  const Strides ks = full.k_strides(), vs = full.v_strides();
  auto copy_tokens = [&](int from, int to) {
    for (int b = 0; b < full.batch; ++b)
      for (int j = from; j < to; ++j)
        for (int h = 0; h < full.hkv; ++h) {
          for (int x = 0; x < full.d; ++x) kc.set(offset(ks, b, j, h, x), in.k.get(offset(ks, b, j, h, x)));
          for (int x = 0; x < full.dv; ++x) vc.set(offset(vs, b, j, h, x), in.v.get(offset(vs, b, j, h, x)));
        }
  };
  copy_tokens(0, off);
  for (int start = 0; start < full.sq; start += chunk) {
    const int len = std::min(chunk, full.sq - start);
    a.s_new = len;
    a.kv_offset = off + start;
    Tensor kn(full.dtype, std::int64_t{full.batch} * len * full.hkv * full.d), vn(full.dtype, std::int64_t{full.batch} * len * full.hkv * full.dv);
    const Strides kns = contiguous_strides(TensorLayout::bshd, len, full.hkv, full.d), vns = contiguous_strides(TensorLayout::bshd, len, full.hkv, full.dv);
    for (int b = 0; b < full.batch; ++b)
      for (int t = 0; t < len; ++t)
        for (int h = 0; h < full.hkv; ++h) {
          for (int x = 0; x < full.d; ++x) kn.set(offset(kns, b, t, h, x), in.k.get(offset(ks, b, off + start + t, h, x)));
          for (int x = 0; x < full.dv; ++x) vn.set(offset(vns, b, t, h, x), in.v.get(offset(vs, b, off + start + t, h, x)));
        }
    if (s.host) {
      copy_tokens(off + start, off + start + len);  // no device: the append is a copy
    } else {
      const kernels::KvAppendResult app = [&] {
        const Timed t(Phase::kernel);
        return kernels::run_kv_append(a, kn, vn, kc, vc);
      }();
      RC_ASSERT(app.guard_damage.empty());
      kc = app.k_cache;
      vc = app.v_cache;
    }
    // Attend: the chunk's queries over the first off + start + len keys.
    AttnProblem step = full;
    step.sq = len;
    step.sk = off + start + len;
    step.kv_offset = off + start;
    step.q = step.o = Strides{};
    step.k = ks;
    step.v = vs;
    AttnInputs sin{Tensor(full.dtype, step.q_span()), kc, vc};
    for (int b = 0; b < full.batch; ++b)
      for (int i = 0; i < len; ++i)
        for (int h = 0; h < full.hq; ++h)
          for (int x = 0; x < full.d; ++x)
            sin.q.set(offset(step.q_strides(), b, i, h, x), in.q.get(offset(full.q_strides(), b, start + i, h, x)));
    RC_PRE(static_cast<bool>(s.kernel.supports(s.dev, step)));
    const RunResult got = run(s, kd, step, sin);
    const oracle::CheckResult chk = timed_check(step, sin, got.out);
    if (!chk.pass) RC_FAIL(c.id() + ": chunk at " + std::to_string(start) + " (len " + std::to_string(len) + "): " + chk.summary());
    for (int b = 0; b < full.batch; ++b)
      for (int i = 0; i < len; ++i) {
        const double diff = max_row_diff(step, got.out, i, full, ref.out, start + i, b, b);
        if (diff > chk.o_bound_max + ref_chk.o_bound_max)
          RC_FAIL(c.id() + ": chunked row " + std::to_string(start + i) + " differs from prefill by " + std::to_string(diff) +
                  " (bounds " + std::to_string(chk.o_bound_max) + " + " + std::to_string(ref_chk.o_bound_max) + ")");
      }
  }
}

void prop_decode_last_row_equals_prefill(const Subject& s) {
  const KernelInfo& dec = s.decoder ? *s.decoder : s.kernel;
  const Case c = draw_case(s.domain);
  const AttnProblem& p = c.problem;
  AttnProblem last = p;
  last.sq = 1;
  if (p.kv_offset > 0) last.kv_offset = p.kv_offset + p.sq - 1;  // the same cache, one new token
  // The one-row problem has its own Q and O (contiguous); K and V are shared, strides and all.
  last.q = last.o = Strides{};
  // The last row keeps its diagonal: with bottom-right alignment it is the same (keys - 1); a top-left
  // mask would move, so the property uses the alignment that is invariant under dropping rows above.
  RC_PRE(p.causal != Causal::top_left);
  RC_PRE(static_cast<bool>(dec.supports(s.dev, last)));
  const AttnInputs in = inputs_of(s, c);
  AttnInputs lin{Tensor(p.dtype, last.q_span()), in.k, in.v};
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < p.hq; ++h)
      for (int x = 0; x < p.d; ++x)
        lin.q.set(offset(last.q_strides(), b, 0, h, x), in.q.get(offset(p.q_strides(), b, p.sq - 1, h, x)));
  const RunResult full = run(s, s.kernel, p, in), one = run(s, dec, last, lin);
  const oracle::CheckResult cf = timed_check(p, in, full.out), co = timed_check(last, lin, one.out);
  RC_ASSERT(cf.pass);
  RC_ASSERT(co.pass);
  for (int b = 0; b < p.batch; ++b) {
    const double diff = max_row_diff(p, full.out, p.sq - 1, last, one.out, 0, b, b);
    if (diff > cf.o_bound_max + co.o_bound_max)
      RC_FAIL(c.id() + ": " + dec.name + " on the last row alone differs from " + s.kernel.name + "'s prefill by " + std::to_string(diff));
  }
}

void prop_decode_splits_agree(const Subject& s) {
  const Case c = draw_case(s.domain);
  const AttnInputs in = inputs_of(s, c);
  const int splits = *rc::gen::element(1, 2, 3, 7, 64);
  RC_TAG("splits " + std::to_string(splits));
  const KernelInfo forced = kernels::decode_with_splits(splits);
  RC_PRE(static_cast<bool>(forced.supports(s.dev, c.problem)));
  const RunResult a = run(s, s.kernel, c.problem, in), b = run(s, forced, c.problem, in);
  const oracle::CheckResult ca = timed_check(c.problem, in, a.out), cb = timed_check(c.problem, in, b.out);
  if (!cb.pass) RC_FAIL(c.id() + ": decode with " + std::to_string(splits) + " split(s): " + cb.summary());
  for (int bb = 0; bb < c.problem.batch; ++bb)
    for (int i = 0; i < c.problem.sq; ++i) {
      const double diff = max_row_diff(c.problem, a.out, i, c.problem, b.out, i, bb, bb);
      if (diff > ca.o_bound_max + cb.o_bound_max)
        RC_FAIL(c.id() + ": " + std::to_string(splits) + " split(s) differ from the default by " + std::to_string(diff));
    }
}

std::vector<NamedProperty> properties_for(const std::string& family) {
  std::vector<NamedProperty> v{{"AgreesWithOracle", prop_agrees_with_oracle},
                               {"WindowsAgreeWithOracle", prop_windows_agree_with_oracle},
                               {"EveryOutputWritten", prop_every_output_written},
                               {"GuardBandsIntact", prop_guard_bands_intact},
                               {"FiniteWhereOracleIs", prop_finite_where_oracle_is},
                               {"Deterministic", prop_deterministic},
                               {"BatchInvariant", prop_batch_invariant},
                               {"ChunkedAppendEqualsPrefill", prop_chunked_append_equals_prefill}};
  if (family == "decode" || family.find("decode") != std::string::npos) v.push_back({"SplitsAgree", prop_decode_splits_agree});
  else v.push_back({"DecodeLastRowEqualsPrefill", prop_decode_last_row_equals_prefill});
  // Last: it holds four tensors of 2^31 elements (skipped, naming the memory, on smaller devices).
  v.push_back({"LargeOffsetsAgree", prop_large_offsets_agree, hold_large_offsets});
  return v;
}

std::vector<std::string> all_property_names() {
  std::vector<std::string> names;
  for (const auto& p : properties_for("any")) names.push_back(p.name);
  names.insert(names.end() - 2, "SplitsAgree");
  return names;
}

std::string property_device_refusal(const std::string& property, const Subject& s) {
  if (property != "LargeOffsetsAgree") return {};
  // A host stand-in with a stand-in device memory (a CPU test of the hold) is asked like a device.
  if (s.host && !s.memory) return "runs on the host: LargeOffsetsAgree needs four device tensors of 2^31 elements";
  return large_offsets_refusal(s);
}

}  // namespace flashprobe::gate
