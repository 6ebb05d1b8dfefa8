// nvcuda::wmma memory paths as the engine's OperandPath values (hardware_probe.h): absolute
// (lane, slot) -> (row, col) maps, duplicates included, that the semantic probe is reconciled with.
#include <string>
#include <vector>

#include "flashprobe/probes/load_path.h"
#include "nvidia_atoms.h"

namespace flashprobe::nvidia::detail {
namespace pr = flashprobe::probes;

std::vector<WmmaConfig> wmma_configs() {
  std::vector<WmmaConfig> v;
  for (auto shape : {WmmaShape::m16n16k16, WmmaShape::m32n8k16, WmmaShape::m8n32k16})
    for (auto in : {DType::f16, DType::bf16})
      for (auto a : {Major::row, Major::col})
        for (auto b : {Major::row, Major::col}) v.push_back({shape, in, a, b});
  return v;
}

namespace {
const char* major_name(Major m) { return m == Major::row ? "row-major" : "column-major"; }

pr::LoadAtomDesc operand_atom(const pr::AtomDesc& atom, pr::Operand op) {
  pr::LoadAtomDesc d;
  d.name = atom.name + " " + std::string(pr::operand_name(op));
  d.rows = op == pr::Operand::B ? atom.k : atom.m;
  d.cols = op == pr::Operand::A ? atom.k : atom.n;
  d.type = op == pr::Operand::A ? atom.a_type : op == pr::Operand::B ? atom.b_type : atom.c_type;
  d.wave = atom.wave;
  d.slots = op == pr::Operand::A ? atom.a_slots : op == pr::Operand::B ? atom.b_slots : atom.c_slots;
  return d;
}

std::vector<std::string> load_problems(const pr::LoadProbeResult& r) {
  auto out = r.anomalies;
  for (auto c : r.unloaded) out.push_back("memory element " + pr::to_string(c) + " reached no slot");
  return out;
}

pr::OperandPath load(const WmmaConfig& cfg, const pr::AtomDesc& atom, pr::Operand op, Major acc_major) {
  const auto la = operand_atom(atom, op);
  const auto enc = pr::load_encoding(la);
  const std::vector<float> mem(enc.begin(), enc.end());
  std::vector<float> frag(static_cast<std::size_t>(la.wave) * la.slots);
  const WmmaOperand wop = op == pr::Operand::A ? WmmaOperand::a : op == pr::Operand::B ? WmmaOperand::b : WmmaOperand::accumulator;
  run_wmma_load(cfg, wop, acc_major, 1, mem, frag);
  const auto r = pr::infer_load_path(la, std::vector<double>(frag.begin(), frag.end()));
  const Major major = op == pr::Operand::A ? cfg.a : op == pr::Operand::B ? cfg.b : acc_major;
  return {op, std::string("load_matrix_sync from ") + major_name(major) + " memory", r.derived, load_problems(r)};
}

pr::OperandPath store(const WmmaConfig& cfg, const pr::AtomDesc& atom, Major major) {
  const auto la = operand_atom(atom, pr::Operand::C);
  const auto enc = pr::store_encoding(la);
  const std::vector<float> frag(enc.begin(), enc.end());
  std::vector<float> mem(static_cast<std::size_t>(la.rows) * la.cols);
  run_wmma_store(cfg, major, 1, frag, mem);
  std::vector<std::string> anomalies;
  auto layout = pr::infer_store_path(la, std::vector<double>(mem.begin(), mem.end()), anomalies);
  return {pr::Operand::C, std::string("store_matrix_sync to ") + major_name(major) + " memory", std::move(layout),
          std::move(anomalies)};
}
}  // namespace

std::vector<pr::OperandPath> wmma_memory_paths(const WmmaConfig& cfg, const pr::AtomDesc& atom) {
  // The first path of each operand is the one the memory layout is taken from (memory_layout()).
  return {load(cfg, atom, pr::Operand::A, Major::row), load(cfg, atom, pr::Operand::B, Major::row),
          load(cfg, atom, pr::Operand::C, Major::row), load(cfg, atom, pr::Operand::C, Major::col),
          store(cfg, atom, Major::row), store(cfg, atom, Major::col)};
}

}  // namespace flashprobe::nvidia::detail
