#include "flashprobe/kernels/case_arena.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/guard.h"
#include "modified_inputs.h"

namespace flashprobe::kernels {
namespace {

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// A buffer of the case: its data at `data` (from the allocation's start), kGuardBytes of guard
// pattern right before and right after it.
struct Slot {
  const char* name;
  std::size_t data, bytes;
};

struct Layout {
  std::vector<Slot> slots;  // q, k, v, o, lse, workspace[, alibi_slopes][, seqlens_k]
  std::size_t total = 0;
  const Slot& at(std::size_t i) const { return slots[i]; }
};
enum : std::size_t { kQ, kK, kV, kO, kLse, kWs, kFirstMask };

Layout layout(const AttnProblem& p, std::size_t ws_bytes) {
  const std::size_t es = dtype_size(p.dtype);
  Layout l;
  const auto add = [&](const char* name, std::size_t bytes) {
    const std::size_t data = l.total + kGuardBytes;
    l.slots.push_back({name, data, bytes});
    l.total = align_up(data + bytes + kGuardBytes);
  };
  add("q", static_cast<std::size_t>(p.q_span()) * es);
  add("k", static_cast<std::size_t>(p.k_span()) * es);
  add("v", static_cast<std::size_t>(p.v_span()) * es);
  add("o", static_cast<std::size_t>(p.o_span()) * dtype_size(p.out_dtype));
  add("lse", static_cast<std::size_t>(p.lse_size()) * sizeof(float));
  add("workspace", ws_bytes);
  if (!p.alibi_slopes.empty()) add("alibi_slopes", p.alibi_slopes.size() * sizeof(float));
  if (!p.seqlens_k.empty()) add("seqlens_k", p.seqlens_k.size() * sizeof(int));
  return l;
}

void note_damage(RunResult& r, const Slot& s, const std::uint8_t* image) {
  const std::span<const std::uint8_t> before(image + s.data - kGuardBytes, kGuardBytes), after(image + s.data + s.bytes, kGuardBytes);
  std::optional<GuardDamage> d = find_guard_damage(before, true);
  if (!d) d = find_guard_damage(after, false);
  if (d) r.guard_damage.push_back(std::string(s.name) + ": " + d->describe());
}

void note_modified(RunResult& r, const char* name, const std::uint8_t* now, const std::uint8_t* was, std::size_t bytes,
                   std::size_t es) {
  if (auto m = describe_modified(name, {now, bytes}, {was, bytes}, es)) r.inputs_modified.push_back(*m);
}

}  // namespace

CaseArena::CaseArena(std::unique_ptr<DeviceMemory> mem) : mem_(std::move(mem)) {
  band_ = static_cast<std::uint8_t*>(mem_->allocate_host(kGuardBytes));
  fill_guard({band_, kGuardBytes});
}

CaseArena::~CaseArena() {
  try {
    mem_->synchronize();
  } catch (...) {  // a failed case already reported its error; the memory is released all the same
  }
  if (base_) mem_->release(base_);
  if (mirror_) mem_->release_host(mirror_);
  if (staging_.p) mem_->release_host(staging_.p);
  if (before_.p) mem_->release_host(before_.p);
  mem_->release_host(band_);
}

std::uint8_t* CaseArena::device(std::size_t bytes) {
  if (bytes > capacity_) {
    mem_->synchronize();  // nothing queued may still use the old allocation
    const std::size_t n = std::max(bytes, capacity_ * 3 / 2);
    if (base_) mem_->release(base_);
    if (mirror_) mem_->release_host(mirror_);
    base_ = mirror_ = nullptr;
    capacity_ = 0;
    base_ = static_cast<std::uint8_t*>(mem_->allocate(n));
    mirror_ = static_cast<std::uint8_t*>(mem_->allocate_host(n));
    capacity_ = n;
    ++grown_;
  }
  return base_;
}

std::uint8_t* CaseArena::grow_host(Host& h, std::size_t bytes) {
  if (bytes > h.n) {
    mem_->synchronize();
    const std::size_t n = std::max(bytes, h.n * 3 / 2);
    if (h.p) mem_->release_host(h.p);
    h.p = nullptr;
    h.n = 0;
    h.p = static_cast<std::uint8_t*>(mem_->allocate_host(n));
    h.n = n;
  }
  return h.p;
}
std::uint8_t* CaseArena::staging(std::size_t bytes) { return grow_host(staging_, bytes); }
std::uint8_t* CaseArena::before(std::size_t bytes) { return grow_host(before_, bytes); }

ArenaRun run_in_arena(CaseArena& arena, const KernelInfo& kernel, const DeviceInfo& dev, const AttnProblem& p,
                      const ArenaInputs& src, const RunOptions& opt) {
  require_valid(p);
  if (opt.check_supported)
    if (Support s = kernel.supports(dev, p); !s) throw UsageError(kernel.name + " does not support " + p.id() + ": " + s.reason);
  if (!src.host && !src.fill) throw UsageError("run_in_arena needs host inputs or a fill (ArenaInputs)");
  if (src.host && (src.host->q.dtype != p.dtype || src.host->q.size() < p.q_span() || src.host->k.size() < p.k_span() ||
                   src.host->v.size() < p.v_span()))
    throw UsageError("inputs do not match the problem " + p.id() + " (dtype or element count)");
  using clock = std::chrono::steady_clock;
  const auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  ArenaRun out;
  RunResult& r = out.run;
  DeviceMemory& mem = arena.memory();
  const auto t_up = clock::now();
  r.workspace_bytes = kernel.workspace_bytes(p);
  const Layout l = layout(p, r.workspace_bytes);
  // Staging for the uploads: host inputs and the mask inputs, each at its slot's place in one buffer.
  std::uint8_t* base = arena.device(l.total);
  std::uint8_t* stage = arena.staging(l.total);
  // 1. Everything poison, then every guard band.
  mem.fill(base, kPoisonByte, l.total);
  for (const Slot& s : l.slots) {
    mem.to_device(base + s.data - kGuardBytes, arena.band(), kGuardBytes);
    mem.to_device(base + s.data + s.bytes, arena.band(), kGuardBytes);
  }
  // 2. Inputs: uploaded, or filled in place.
  const Slot &q = l.at(kQ), &k = l.at(kK), &v = l.at(kV);
  if (src.host) {
    for (auto [s, t] : {std::pair{&q, &src.host->q}, {&k, &src.host->k}, {&v, &src.host->v}}) {
      std::memcpy(stage + s->data, t->bytes.data(), s->bytes);
      mem.to_device(base + s->data, stage + s->data, s->bytes);
    }
  } else {
    src.fill(base + q.data, base + k.data, base + v.data);
  }
  for (std::size_t i = kFirstMask; i < l.slots.size(); ++i) {
    const Slot& s = l.at(i);
    if (std::string(s.name) == "alibi_slopes") {
      const std::vector<float> a(p.alibi_slopes.begin(), p.alibi_slopes.end());
      std::memcpy(stage + s.data, a.data(), s.bytes);
    } else {
      std::memcpy(stage + s.data, p.seqlens_k.data(), s.bytes);
    }
    mem.to_device(base + s.data, stage + s.data, s.bytes);
  }
  // The filled inputs, bands and all, read back before the launch (the oracle's inputs and the
  // inputs-unchanged reference).
  const std::size_t in_from = q.data - kGuardBytes, in_bytes = v.data + v.bytes + kGuardBytes - in_from;
  std::uint8_t* was = nullptr;
  if (!src.host) {
    was = arena.before(in_bytes);
    mem.to_host(was, base + in_from, in_bytes);
  }
  mem.synchronize();
  if (!src.host) {
    const std::uint8_t* image = was - in_from;  // indexed by allocation offsets
    for (const Slot* s : {&q, &k, &v}) {
      RunResult fill_check;
      note_damage(fill_check, *s, image);
      if (!fill_check.guard_damage.empty())
        throw std::logic_error("the device input fill wrote outside " + fill_check.guard_damage.front());
    }
    for (auto [s, t] : {std::pair{&q, &out.in.q}, {&k, &out.in.k}, {&v, &out.in.v}}) {
      t->dtype = p.dtype;
      t->bytes.assign(image + s->data, image + s->data + s->bytes);
    }
  }
  r.upload_s = since(t_up);

  // 3. The launch, and the whole used range back in one copy.
  const auto t_dev = clock::now();
  const float* alibi = nullptr;
  const int* seqlens = nullptr;
  for (std::size_t i = kFirstMask; i < l.slots.size(); ++i) {
    if (std::string(l.at(i).name) == "alibi_slopes") alibi = reinterpret_cast<const float*>(base + l.at(i).data);
    else seqlens = reinterpret_cast<const int*>(base + l.at(i).data);
  }
  const DeviceTensors t{base + q.data, base + k.data, base + v.data, base + l.at(kO).data,
                        reinterpret_cast<float*>(base + l.at(kLse).data), alibi, seqlens};
  kernel.launch(p, t, r.workspace_bytes ? base + l.at(kWs).data : nullptr, nullptr);
  std::uint8_t* image = arena.mirror();
  mem.to_host(image, base, l.total);
  mem.synchronize();
  r.device_s = since(t_dev);

  // 4. The checks, on the host copy.
  const auto t_down = clock::now();
  const Slot &o = l.at(kO), &lse = l.at(kLse);
  r.out.o = Tensor(p.out_dtype, p.o_span());
  std::memcpy(r.out.o.bytes.data(), image + o.data, o.bytes);
  r.out.lse.resize(static_cast<std::size_t>(p.lse_size()));
  std::memcpy(r.out.lse.data(), image + lse.data, lse.bytes);
  r.o_unwritten = count_unwritten_o(p, r.out.o, &r.first_unwritten);
  std::string first_lse;
  r.lse_unwritten = count_unwritten_lse(p, r.out.lse, &first_lse);
  if (r.first_unwritten.empty()) r.first_unwritten = first_lse;
  for (const Slot& s : l.slots) note_damage(r, s, image);
  if (opt.check_inputs_unchanged) {
    const std::size_t es = dtype_size(p.dtype);
    const AttnInputs& ref = src.host ? *src.host : out.in;
    note_modified(r, "q", image + q.data, ref.q.bytes.data(), q.bytes, es);
    note_modified(r, "k", image + k.data, ref.k.bytes.data(), k.bytes, es);
    note_modified(r, "v", image + v.data, ref.v.bytes.data(), v.bytes, es);
  }
  r.download_s = since(t_down);
  return out;
}

}  // namespace flashprobe::kernels
