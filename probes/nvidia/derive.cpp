#include "flashprobe/probes/nvidia/derive.h"

#include <cmath>
#include <cstdint>
#include <map>

#include "flashprobe/core/error.h"

namespace flashprobe::nvidia {
namespace {

OperandMap blank(std::string what, int lanes, int slots, int rows, int cols) {
  OperandMap m;
  m.what = std::move(what);
  m.lanes = lanes;
  m.slots = slots;
  m.rows = rows;
  m.cols = cols;
  m.at.assign(static_cast<std::size_t>(lanes) * slots, Coord{});
  return m;
}

// v encodes index + 1 (times `scale`) for an index in [0, limit): the index, or -1.
int decode_index(double v, double scale, int limit) {
  const double q = v / scale - 1;
  if (!std::isfinite(q) || q != std::nearbyint(q) || q < 0 || q >= limit) return -1;
  return static_cast<int>(q);
}

std::string where(int lane, int slot) { return "lane " + std::to_string(lane) + " slot " + std::to_string(slot); }

}  // namespace

OperandMap derive_ldmatrix(const LdmatrixConfig& cfg) {
  constexpr int kRows = 32;
  const int slots = 2 * cfg.matrices;
  auto map = blank(name(cfg) + " via ldmatrix (row r = the row whose address thread r supplies)", 32, slots,
                   8 * cfg.matrices, 8);
  // Bit 14 marks a real value: b16 0 (what an unwritten register would likely hold) never decodes.
  std::vector<std::uint16_t> rows(kRows * 8);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < 8; ++c) rows[r * 8 + c] = static_cast<std::uint16_t>(0x4000 | (r << 3) | c);
  std::vector<int> row_of_thread(32);
  for (int t = 0; t < 32; ++t) row_of_thread[t] = kRows - 1 - t;
  std::vector<std::uint32_t> regs(32 * cfg.matrices);
  run_ldmatrix(cfg, 1, rows, row_of_thread, regs);
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < cfg.matrices; ++j)
      for (int h = 0; h < 2; ++h) {
        const std::uint32_t v = (regs[lane * cfg.matrices + j] >> (16 * h)) & 0xFFFF;
        const int slot = 2 * j + h;
        if ((v & 0xC000) != 0x4000) {
          map.anomalies.push_back(where(lane, slot) + ": value " + std::to_string(v) + " is not an encoded element");
          continue;
        }
        const int thread = kRows - 1 - static_cast<int>((v >> 3) & 31);
        map(lane, slot) = {thread, static_cast<int>(v & 7)};
        if (thread >= map.rows)
          map.anomalies.push_back(where(lane, slot) + ": holds a row addressed by thread " + std::to_string(thread) +
                                  ", outside the documented threads 0.." + std::to_string(map.rows - 1));
      }
  return map;
}

OperandMap derive_wmma_load(const WmmaConfig& cfg, WmmaOperand op, Major acc_layout) {
  const auto s = wmma_mnk(cfg.shape);
  const auto sl = wmma_slots(cfg);
  const int rows = op == WmmaOperand::b ? s.k : s.m;
  const int cols = op == WmmaOperand::a ? s.k : s.n;
  const int slots = op == WmmaOperand::a ? sl.a : op == WmmaOperand::b ? sl.b : sl.c;
  const Major major = op == WmmaOperand::a ? cfg.a : op == WmmaOperand::b ? cfg.b : acc_layout;
  const char* opname = op == WmmaOperand::a ? "A" : op == WmmaOperand::b ? "B" : "C";
  auto map = blank(std::string(opname) + " of " + name(cfg) + " via load_matrix_sync from " +
                       (major == Major::row ? "row" : "column") + "-major memory",
                   32, slots, rows, cols);
  const int tile = rows * cols;
  std::vector<float> mem(2 * tile), frag(2 * 32 * slots);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      mem[r * cols + c] = static_cast<float>(r + 1);
      mem[tile + r * cols + c] = static_cast<float>(c + 1);
    }
  run_wmma_load(cfg, op, acc_layout, 2, mem, frag);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < slots; ++i) {
      const float vr = frag[lane * slots + i], vc = frag[(32 + lane) * slots + i];
      const int r = decode_index(vr, 1, rows), c = decode_index(vc, 1, cols);
      if (r < 0 || c < 0) {
        map.anomalies.push_back(where(lane, i) + ": loaded " + std::to_string(vr) + " / " + std::to_string(vc) +
                                ", not a (row + 1, col + 1) pair");
        continue;
      }
      map(lane, i) = {r, c};
    }
  return map;
}

OperandMap derive_wmma_store(const WmmaConfig& cfg, Major layout) {
  const auto s = wmma_mnk(cfg.shape);
  const int slots = wmma_slots(cfg).c;
  auto map = blank("C of " + name(cfg) + " via store_matrix_sync to " + (layout == Major::row ? "row" : "column") +
                       "-major memory",
                   32, slots, s.m, s.n);
  std::vector<float> frag(32 * slots), mem(s.m * s.n);
  for (int i = 0; i < 32 * slots; ++i) frag[i] = static_cast<float>(i + 1);
  run_wmma_store(cfg, layout, 1, frag, mem);
  for (int r = 0; r < s.m; ++r)
    for (int c = 0; c < s.n; ++c) {
      const int idx = decode_index(mem[r * s.n + c], 1, 32 * slots);
      if (idx < 0) {
        map.anomalies.push_back("element (" + std::to_string(r) + ", " + std::to_string(c) + ") holds " +
                                std::to_string(mem[r * s.n + c]) + ": stored by no slot");
        continue;
      }
      auto& at = map(idx / slots, idx % slots);
      if (at.row >= 0)
        map.anomalies.push_back(where(idx / slots, idx % slots) + ": stored to more than one element");
      at = {r, c};
    }
  return map;
}

WgmmaMaps derive_wgmma(const WgmmaConfig& cfg) {
  constexpr int kThreads = 128, kM = 64, kK = 16;
  const int n = cfg.n, acc = n / 2;
  WgmmaMaps out;
  out.d = blank("D of " + name(cfg) + " from A and B in shared memory (m from A[m][k] = m + 1, n from B[k][n] = n + 1)",
                kThreads, acc, kM, n);
  // Absolute D map through the SS form: both operands in documented shared-memory layouts.
  {
    const WgmmaConfig ss{n, true};
    std::vector<float> a(2 * kM * kK), b(2 * kK * n), c(2 * kThreads * acc, 0.0f), d(c.size());
    for (int m = 0; m < kM; ++m)
      for (int k = 0; k < kK; ++k) {
        a[m * kK + k] = static_cast<float>(m + 1);  // experiment 0: rows
        a[kM * kK + m * kK + k] = 1.0f;             // experiment 1: columns
      }
    for (int k = 0; k < kK; ++k)
      for (int j = 0; j < n; ++j) {
        b[k * n + j] = 1.0f;
        b[kK * n + k * n + j] = static_cast<float>(j + 1);
      }
    run_wgmma(ss, 2, a, b, c, d);
    for (int t = 0; t < kThreads; ++t)
      for (int i = 0; i < acc; ++i) {
        const float vm = d[t * acc + i], vn = d[(kThreads + t) * acc + i];
        const int m = decode_index(vm, kK, kM), j = decode_index(vn, kK, n);
        if (m < 0 || j < 0) {
          out.d.anomalies.push_back(where(t, i) + ": D = " + std::to_string(vm) + " / " + std::to_string(vn) +
                                    ", not 16 (m + 1) / 16 (n + 1)");
          continue;
        }
        out.d(t, i) = {m, j};
      }
  }
  if (cfg.a_from_smem) return out;

  out.a = blank("A registers of " + name(cfg) + " (one-hot slot, B[k][n] = k + 1; m through the D map)", kThreads, 8,
                kM, kK);
  const int ex = 1 + kThreads * 8;  // experiment 0: n with A registers all ones; then one per A slot
  std::vector<float> a(static_cast<std::size_t>(ex) * kThreads * 8, 0.0f), b(static_cast<std::size_t>(ex) * kK * n);
  std::vector<float> c(static_cast<std::size_t>(ex) * kThreads * acc, 0.0f), d(c.size());
  for (int i = 0; i < kThreads * 8; ++i) a[i] = 1.0f;
  for (int k = 0; k < kK; ++k)
    for (int j = 0; j < n; ++j) b[k * n + j] = static_cast<float>(j + 1);
  for (int e = 1; e < ex; ++e) {
    a[static_cast<std::size_t>(e) * kThreads * 8 + (e - 1)] = 1.0f;
    for (int k = 0; k < kK; ++k)
      for (int j = 0; j < n; ++j) b[static_cast<std::size_t>(e) * kK * n + k * n + j] = static_cast<float>(k + 1);
  }
  run_wgmma(cfg, ex, a, b, c, d);
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < acc; ++i) {
      const int j = decode_index(d[t * acc + i], kK, n);
      if (j != out.d(t, i).col)
        out.d.anomalies.push_back(where(t, i) + ": RS form with A registers all ones gives n = " + std::to_string(j) +
                                  ", the SS form gave " + std::to_string(out.d(t, i).col));
    }
  for (int e = 1; e < ex; ++e) {
    const int t = (e - 1) / 8, s = (e - 1) % 8;
    int m = -1, k = -1, lit = 0;
    bool consistent = true;
    const float* de = d.data() + static_cast<std::size_t>(e) * kThreads * acc;
    for (int u = 0; u < kThreads; ++u)
      for (int i = 0; i < acc; ++i) {
        const float v = de[u * acc + i];
        if (v == 0.0f) continue;
        ++lit;
        const int kk = decode_index(v, 1, kK);
        const int mm = out.d(u, i).row;
        if (kk < 0 || (k >= 0 && kk != k) || (m >= 0 && mm != m)) consistent = false;
        k = kk;
        m = mm;
      }
    // One A element (m, k) times B[k][n] = k + 1 lights exactly row m: n lit D slots, all k + 1.
    if (!consistent || lit != n || m < 0 || k < 0) {
      out.a.anomalies.push_back(where(t, s) + ": one-hot A lit " + std::to_string(lit) + " D slots" +
                                (consistent ? "" : " with inconsistent rows or values") + ", expected one full row of " +
                                std::to_string(n));
      continue;
    }
    out.a(t, s) = {m, k};
  }
  return out;
}

}  // namespace flashprobe::nvidia
