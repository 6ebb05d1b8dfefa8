// The probe engine (see engine.h for the experiment plan and its reasoning).
#include "flashprobe/probes/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <array>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "flashprobe/probes/formula.h"
#include "packing.h"

namespace flashprobe::probes {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::matches: return "matches";
    case Verdict::differs: return "differs";
    case Verdict::not_isomorphic: return "not isomorphic to the expected layout";
    case Verdict::no_expected: return "no expected layout";
  }
  return "?";
}

bool ProbeResult::checks_ok() const {
  return std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.ok; });
}
bool ProbeResult::ok() const {
  return checks_ok() && anomalies.empty() && (verdict == Verdict::matches || verdict == Verdict::no_expected);
}

namespace {

std::string cell(int flat, int slots) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "T%02dV%d", flat / slots, flat % slots);
  return buf;
}
std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Runs one phase of experiments in as few executor calls as the budget allows. Experiments are
// consumed in order, so a phase may put the experiments others depend on first.
class Runner {
 public:
  using Fill = std::function<void(int e, double* a, double* b, double* c)>;
  using Consume = std::function<void(int e, const double* d)>;
  Runner(Executor& ex, const AtomDesc& atom, std::size_t max_bytes) : ex_(ex), atom_(atom), max_bytes_(max_bytes) {}

  void run(int count, const Fill& fill, const Consume& consume) {
    if (count <= 0) return;
    const std::size_t per = sizeof(double) * static_cast<std::size_t>(atom_.wave) *
                            static_cast<std::size_t>(atom_.a_slots + atom_.b_slots + 2 * atom_.c_slots);
    int chunk = static_cast<int>(std::max<std::size_t>(1, max_bytes_ / per));
    if (ex_.max_batch() > 0) chunk = std::min(chunk, ex_.max_batch());
    const std::size_t nc = static_cast<std::size_t>(atom_.wave) * static_cast<std::size_t>(atom_.c_slots);
    for (int start = 0; start < count; start += chunk) {
      const int n = std::min(chunk, count - start);
      // One batch buffer reused across calls and phases (fresh allocations cost page faults).
      if (batch_.wave == 0) batch_ = FragmentBatch(atom_, 0);
      batch_.count = n;
      const std::size_t w = static_cast<std::size_t>(atom_.wave), un = static_cast<std::size_t>(n);
      batch_.a_data.assign(un * w * static_cast<std::size_t>(atom_.a_slots), 0.0);  // keeps capacity
      batch_.b_data.assign(un * w * static_cast<std::size_t>(atom_.b_slots), 0.0);
      batch_.c_data.assign(un * w * static_cast<std::size_t>(atom_.c_slots), 0.0);
      FragmentBatch& batch = batch_;
      for (int i = 0; i < n; ++i) fill(start + i, batch.a(i), batch.b(i), batch.c(i));
      ex_.run(batch, d_);
      const auto& d = d_;
      if (d.size() != batch.d_size())
        throw std::runtime_error("executor '" + ex_.description() + "' returned " + std::to_string(d.size()) +
                                 " D values for " + std::to_string(batch.d_size()));
      for (int i = 0; i < n; ++i) consume(start + i, d.data() + static_cast<std::size_t>(i) * nc);
      ++calls;
      experiments += n;
    }
  }
  int calls = 0;
  long experiments = 0;

 private:
  Executor& ex_;
  const AtomDesc& atom_;
  std::size_t max_bytes_;
  FragmentBatch batch_;
  std::vector<double> d_;
};

using packing::Effect;

struct Classified {
  enum State { complete, ignored, incomplete, overfull };
};

// One input operand (A or B) of the probe.
struct Side {
  Operand op;
  int lanes = 0, slots = 0, n = 0;
  int full = 0;                               // used D slots one element lights (N for A, M for B)
  std::vector<Effect> single;                 // P1
  std::vector<int> state;                     // Classified::State per slot
  std::vector<std::vector<int>> groups;       // complete groups, each sorted (primary first)
  std::vector<std::vector<int>> lit;          // per group: its row (A) / column (B) of D slots
  std::vector<int> group_of;                  // slot -> group or -1
  std::vector<std::vector<int>> pending;      // multi-copy groups waiting for P2
  std::vector<std::vector<int>> short_groups, short_lit;  // clean but short singles without partners
  std::vector<int> unresolved;                // slots nobody could explain

  int flat(int lane, int slot) const { return lane * slots + slot; }
  bool is_ignored(int i) const { return state[static_cast<std::size_t>(i)] == Classified::ignored && group_of[static_cast<std::size_t>(i)] < 0; }
};

// A replica-partner transform: XOR on the lane index and on the slot index.
struct Mask {
  int lane_x = 0, slot_y = 0;
};
int apply(const Side& s, int i, Mask m) {
  const int lane = (i / s.slots) ^ m.lane_x, slot = (i % s.slots) ^ m.slot_y;
  if (lane >= s.lanes || slot >= s.slots) return -1;
  return s.flat(lane, slot);
}
Mask combine(Mask a, Mask b) { return {a.lane_x ^ b.lane_x, a.slot_y ^ b.slot_y}; }

int pow2_at_least(int n) {
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}

class Engine {
 public:
  Engine(const AtomDesc& atom, Executor& ex, const ProbeOptions& opt)
      : atom_(atom), ex_(ex), opt_(opt), run_(ex, atom, opt.max_call_bytes) {
    W = atom.wave;
    nc = W * atom.c_slots;
    A.op = Operand::A;
    A.lanes = W;
    A.slots = atom.a_slots;
    A.n = W * atom.a_slots;
    B.op = Operand::B;
    B.lanes = W;
    B.slots = atom.b_slots;
    B.n = W * atom.b_slots;
  }

  ProbeResult go() {
    const auto t0 = std::chrono::steady_clock::now();
    res_.atom = atom_.name;
    res_.source = ex_.source();
    res_.executor = ex_.description();
    phase1();
    if (used_count_ > 0) {
      classify(A);
      classify(B);
      find_replicas();
      phase2();
      classes();
      phase3();
      build_layout();
      verify();
    }
    res_.executor_calls = run_.calls;
    res_.experiments = run_.experiments;
    res_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return std::move(res_);
  }

 private:
  // ---- helpers --------------------------------------------------------------------------------
  void anomaly(std::string s) {
    if (res_.anomalies.size() < 200) res_.anomalies.push_back(std::move(s));
    else if (res_.anomalies.size() == 200) res_.anomalies.push_back("... more anomalies not listed");
  }
  void check(std::string name, bool ok, std::string detail) { res_.checks.push_back({std::move(name), ok, std::move(detail)}); }

  Effect effect(const double* d, double one) const { return packing::effect(d, used_, one); }
  bool clean_full(const Effect& e, int full) const { return e.bad == 0 && static_cast<int>(e.lit.size()) == full; }
  static void fill_all(double* p, int n, double v) { std::fill(p, p + n, v); }
  Side& side(int s) { return s == 0 ? A : B; }
  // A one-sided experiment: `slots` of side s (0: A, 1: B) set -- slot j to 2^j when `powers` (a
  // pack), else to 1 -- and every slot of the other operand to 1; C stays 0.
  void one_sided(int s, const std::vector<int>& slots, bool powers, double* a, double* b) const {
    fill_all(s == 0 ? b : a, s == 0 ? B.n : A.n, 1);
    double* x = s == 0 ? a : b;
    for (std::size_t j = 0; j < slots.size(); ++j)
      x[slots[j]] = powers ? std::ldexp(1.0, static_cast<int>(j)) : 1.0;
  }

  // ---- P1 -------------------------------------------------------------------------------------
  using Packs = std::array<std::vector<std::vector<int>>, 2>;  // per side: the slots of each pack
  struct Rerun {
    int side = 0, pack = 0;
    std::string why;  // what made the decoder distrust it
  };

  void phase1() {
    const int K = atom_.k;
    const auto cvals = exact_values({atom_.c_type}, nc);
    used_.assign(static_cast<std::size_t>(nc), 0);
    res_.c_to_d.assign(static_cast<std::size_t>(nc), -1);
    A.single.resize(static_cast<std::size_t>(A.n));
    B.single.resize(static_cast<std::size_t>(B.n));
    std::map<double, int> cindex;
    for (int i = 0; i < nc; ++i) cindex[cvals[static_cast<std::size_t>(i)]] = i;
    // The singles travel in packs (packing.h); packs the decoder cannot trust are re-run as singles.
    const Packs packs{packing::make_packs(A.n, packing::pack_width(atom_.a_type, atom_.c_type)),
                      packing::make_packs(B.n, packing::pack_width(atom_.b_type, atom_.c_type))};
    const int pa = static_cast<int>(packs[0].size());
    auto pack_of = [&](int e) { return std::pair<int, int>{e - 2 < pa ? 0 : 1, e - 2 < pa ? e - 2 : e - 2 - pa}; };
    std::vector<Rerun> rerun;
    // Order: baseline, pass-through, A packs, B packs (decoding needs `used_` and `full`).
    run_.run(
        2 + pa + static_cast<int>(packs[1].size()),
        [&](int e, double* a, double* b, double* c) {
          if (e == 0) {
            fill_all(a, A.n, 1);
            fill_all(b, B.n, 1);
          } else if (e == 1) {
            std::copy(cvals.begin(), cvals.end(), c);
          } else {
            const auto [s, p] = pack_of(e);
            one_sided(s, packs[static_cast<std::size_t>(s)][static_cast<std::size_t>(p)], true, a, b);
          }
        },
        [&](int e, const double* d) {
          if (e == 0) {
            // A slot is used when A and B reach it at all; K is the full sum (less means some (m, k)
            // or (k, n) is held by no slot: reported, the slot still counts as used).
            int short_sums = 0;
            for (int i = 0; i < nc; ++i) {
              if (d[i] == 0) continue;
              if (!std::isnan(d[i])) used_[static_cast<std::size_t>(i)] = 1;
              if (d[i] != K && short_sums++ < 8)
                anomaly("baseline (A = B = 1, C = 0): D " + cell(i, atom_.c_slots) + " = " + num(d[i]) +
                        ", expected " + std::to_string(K) + " (or 0 for an unused slot)");
            }
            used_count_ = static_cast<int>(std::count(used_.begin(), used_.end(), 1));
            A.full = used_count_ / std::max(1, atom_.m);
            B.full = used_count_ / std::max(1, atom_.n);
          } else if (e == 1) {
            for (int i = 0; i < nc; ++i) {
              if (!used_[static_cast<std::size_t>(i)]) continue;
              auto it = cindex.find(d[i]);
              if (it == cindex.end())
                anomaly("pass-through (A = B = 0): D " + cell(i, atom_.c_slots) + " = " + num(d[i]) +
                        " is no C value");
              else
                res_.c_to_d[static_cast<std::size_t>(it->second)] = i;
            }
          } else {
            const auto [s, p] = pack_of(e);
            const auto& members = packs[static_cast<std::size_t>(s)][static_cast<std::size_t>(p)];
            Side& sd = side(s);
            auto dec = packing::decode(d, used_, static_cast<int>(members.size()));
            if (packing::trusted(dec, sd.full)) {
              for (std::size_t j = 0; j < members.size(); ++j)
                sd.single[static_cast<std::size_t>(members[j])] = std::move(dec.members[j]);
            } else {
              rerun.push_back({s, p, distrust(dec, sd, members)});
            }
          }
        });
    const int mn = atom_.m * atom_.n;
    check("C/D used slots", used_count_ == mn,
          std::to_string(used_count_) + " D slots take the value K in the baseline; M*N = " + std::to_string(mn));
    bool identity = true;
    for (int i = 0; i < nc; ++i)
      if (used_[static_cast<std::size_t>(i)] && res_.c_to_d[static_cast<std::size_t>(i)] != i) identity = false;
    check("C/D pass-through", identity,
          identity ? "with A = B = 0 every used D slot returns its own C value"
                   : "some C values come out in another D slot: C and D layouts differ (see c_to_d)");
    rerun_packs(packs, rerun);
  }

  std::string distrust(const packing::Decoded& dec, const Side& sd, const std::vector<int>& members) const {
    if (dec.bad) return "D " + cell(dec.bad_slot, atom_.c_slots) + " = " + num(dec.bad_value) + " is no sum of distinct members";
    for (std::size_t j = 0; j < members.size(); ++j) {
      const auto lit = static_cast<int>(dec.members[j].lit.size());
      if (lit != 0 && lit != sd.full)
        return "member " + cell(members[j], sd.slots) + " lights " + std::to_string(lit) + " of " +
               std::to_string(sd.full) + " D slots";
    }
    return "trusted";
  }

  // Packs the decoder distrusts: every member again as a plain single, so incomplete replicas, short
  // rows and undefined results are classified from true singles. A pack whose members then all turn
  // out clean (each lights nothing or one whole row or column) should have decoded: its values did
  // not add up, which exact arithmetic rules out -- an anomaly.
  void rerun_packs(const Packs& packs, const std::vector<Rerun>& rerun) {
    std::vector<std::pair<int, int>> singles;  // (side, slot)
    for (const Rerun& r : rerun)
      for (int i : packs[static_cast<std::size_t>(r.side)][static_cast<std::size_t>(r.pack)]) singles.emplace_back(r.side, i);
    run_.run(
        static_cast<int>(singles.size()),
        [&](int e, double* a, double* b, double*) {
          const auto [s, i] = singles[static_cast<std::size_t>(e)];
          one_sided(s, {i}, false, a, b);
        },
        [&](int e, const double* d) {
          const auto [s, i] = singles[static_cast<std::size_t>(e)];
          side(s).single[static_cast<std::size_t>(i)] = effect(d, 1);
        });
    int added_up_wrong = 0;
    for (const Rerun& r : rerun) {
      const Side& sd = side(r.side);
      const auto& members = packs[static_cast<std::size_t>(r.side)][static_cast<std::size_t>(r.pack)];
      const bool clean = std::all_of(members.begin(), members.end(), [&](int i) {
        const Effect& e = sd.single[static_cast<std::size_t>(i)];
        return e.bad == 0 && (e.lit.empty() || static_cast<int>(e.lit.size()) == sd.full);
      });
      if (clean && added_up_wrong++ < 8)
        anomaly(std::string(operand_name(sd.op)) + " pack of " + std::to_string(members.size()) + " slots from " +
                cell(members.front(), sd.slots) + ": " + r.why + ", yet each slot alone lights nothing or one whole " +
                (sd.op == Operand::A ? "row" : "column") + ": the packed values did not add up");
    }
    res_.packs_rerun = static_cast<int>(rerun.size());
  }

  void classify(Side& s) {
    s.state.assign(static_cast<std::size_t>(s.n), Classified::ignored);
    s.group_of.assign(static_cast<std::size_t>(s.n), -1);
    for (int i = 0; i < s.n; ++i) {
      const Effect& e = s.single[static_cast<std::size_t>(i)];
      int st;
      if (e.bad == 0 && e.lit.empty()) st = Classified::ignored;
      else if (e.bad == 0 && static_cast<int>(e.lit.size()) == s.full) st = Classified::complete;
      else if (e.bad == 0 && static_cast<int>(e.lit.size()) > s.full) st = Classified::overfull;
      else st = Classified::incomplete;
      s.state[static_cast<std::size_t>(i)] = st;
      if (st == Classified::complete) {
        s.group_of[static_cast<std::size_t>(i)] = static_cast<int>(s.groups.size());
        s.groups.push_back({i});
        s.lit.push_back(e.lit);
      } else if (st == Classified::overfull) {
        s.unresolved.push_back(i);
        anomaly(std::string(operand_name(s.op)) + " " + cell(i, s.slots) + " alone lights " +
                std::to_string(e.lit.size()) + " D slots, more than one " + (s.op == Operand::A ? "row" : "column") +
                " (" + std::to_string(s.full) + ")");
      }
    }
  }

  // ---- R --------------------------------------------------------------------------------------
  std::vector<int> incomplete(const Side& s) const {
    std::vector<int> v;
    for (int i = 0; i < s.n; ++i)
      if (s.state[static_cast<std::size_t>(i)] == Classified::incomplete) v.push_back(i);
    return v;
  }
  bool partner_ok(const Side& s, int i) const {
    if (i < 0) return false;
    const int st = s.state[static_cast<std::size_t>(i)];
    return st == Classified::incomplete || st == Classified::ignored;
  }
  std::vector<Mask> masks(const Side& s, int rep) const {
    std::vector<Mask> out;
    for (int x = 1; x < pow2_at_least(s.lanes); ++x)
      if (partner_ok(s, apply(s, rep, {x, 0}))) out.push_back({x, 0});
    for (int y = 1; y < pow2_at_least(s.slots); ++y)
      if (partner_ok(s, apply(s, rep, {0, y}))) out.push_back({0, y});
    return out;
  }

  // One R round over both operands: `sets[side]` lists the slot sets to try; returns per side the
  // indices of every set whose result is clean and full (one D value of 1 on `full` used slots).
  std::array<std::vector<int>, 2> try_sets(const std::array<std::vector<std::vector<int>>, 2>& sets) {
    std::array<std::vector<int>, 2> found;
    const int na = static_cast<int>(sets[0].size());
    run_.run(
        na + static_cast<int>(sets[1].size()),
        [&](int e, double* a, double* b, double*) {
          if (e < na) one_sided(0, sets[0][static_cast<std::size_t>(e)], false, a, b);
          else one_sided(1, sets[1][static_cast<std::size_t>(e - na)], false, a, b);
        },
        [&](int e, const double* d) {
          const int side = e < na ? 0 : 1;
          if (clean_full(effect(d, 1), side == 0 ? A.full : B.full))
            found[static_cast<std::size_t>(side)].push_back(e < na ? e : e - na);
        });
    return found;
  }

  // The groups a span hypothesis makes of a side's incomplete slots (orbits), or empty if some
  // incomplete slot has no valid orbit.
  std::vector<std::vector<int>> orbits(const Side& sd, const std::vector<Mask>& span) const {
    std::vector<std::vector<int>> out;
    std::vector<char> taken(static_cast<std::size_t>(sd.n), 0);
    for (int i : incomplete(sd)) {
      if (taken[static_cast<std::size_t>(i)]) continue;
      std::vector<int> g;
      for (Mask m : span) {
        const int p = apply(sd, i, m);
        if (!partner_ok(sd, p) || taken[static_cast<std::size_t>(p)] || std::find(g.begin(), g.end(), p) != g.end())
          return {};
        g.push_back(p);
      }
      for (int p : g) taken[static_cast<std::size_t>(p)] = 1;
      std::sort(g.begin(), g.end());
      out.push_back(g);
    }
    return out;
  }

  // Predicted class of every used D slot under a hypothesis, from the P1 singles: a group lights the
  // union of what its copies light alone (true when disagreeing copies each feed part of the result).
  // Empty when some single was not clean (then nothing can be predicted), or when the predicted
  // groups do not partition the used D slots into classes of `full` slots.
  std::vector<int> predict_classes(const Side& sd, const std::vector<std::vector<int>>& groups) const {
    std::vector<int> cls(static_cast<std::size_t>(nc), -1);
    std::map<std::vector<int>, int> ids;
    auto add = [&](std::vector<int> lit) {
      std::sort(lit.begin(), lit.end());
      if (static_cast<int>(lit.size()) != sd.full) return false;
      auto [it, fresh] = ids.emplace(lit, static_cast<int>(ids.size()));
      if (!fresh) return true;
      for (int d : lit) {
        if (cls[static_cast<std::size_t>(d)] >= 0) return false;
        cls[static_cast<std::size_t>(d)] = it->second;
      }
      return true;
    };
    for (std::size_t g = 0; g < sd.groups.size(); ++g)
      if (!add(sd.lit[g])) return {};
    for (const auto& g : groups) {
      std::vector<int> lit;
      for (int p : g) {
        const Effect& e = sd.single[static_cast<std::size_t>(p)];
        if (e.bad) return {};
        lit.insert(lit.end(), e.lit.begin(), e.lit.end());
      }
      if (!add(lit)) return {};
    }
    for (int d = 0; d < nc; ++d)
      if (used_[static_cast<std::size_t>(d)] && cls[static_cast<std::size_t>(d)] < 0) return {};
    return cls;
  }

  // Row classes x column classes must be a grid: every used D slot a distinct (row, column) pair.
  bool grid_ok(const std::vector<int>& rows, const std::vector<int>& cols) const {
    int nr = 0, ncl = 0;
    for (int d = 0; d < nc; ++d) {
      nr = std::max(nr, rows[static_cast<std::size_t>(d)] + 1);
      ncl = std::max(ncl, cols[static_cast<std::size_t>(d)] + 1);
    }
    std::vector<char> seen(static_cast<std::size_t>(nr) * static_cast<std::size_t>(ncl), 0);
    for (int d = 0; d < nc; ++d) {
      if (!used_[static_cast<std::size_t>(d)]) continue;
      char& x = seen[static_cast<std::size_t>(rows[static_cast<std::size_t>(d)]) * static_cast<std::size_t>(ncl) +
                     static_cast<std::size_t>(cols[static_cast<std::size_t>(d)])];
      if (x) return false;
      x = 1;
    }
    return true;
  }

  void find_replicas() {
    std::array<Side*, 2> sides{&A, &B};
    std::array<int, 2> rep{-1, -1};
    std::array<std::vector<Mask>, 2> cand;
    std::array<std::vector<std::vector<Mask>>, 2> spans;  // clean hypotheses: XOR offsets incl. zero
    std::array<std::vector<std::vector<int>>, 2> sets;
    for (int s = 0; s < 2; ++s) {
      auto inc = incomplete(*sides[s]);
      if (inc.empty()) continue;
      rep[s] = inc.front();
      cand[s] = masks(*sides[s], rep[s]);
      for (Mask m : cand[s]) sets[s].push_back({rep[s], apply(*sides[s], rep[s], m)});
    }
    if (sets[0].empty() && sets[1].empty()) {
      for (int s = 0; s < 2; ++s)
        if (rep[s] >= 0) unresolved_all(*sides[s]);
      return;
    }
    auto found = try_sets(sets);  // R1: pairs of copies
    std::array<std::vector<std::vector<int>>, 2> sets2;
    std::array<std::vector<std::vector<Mask>>, 2> spans2;
    for (int s = 0; s < 2; ++s) {
      if (rep[s] < 0) continue;
      for (int f : found[s]) spans[s].push_back({Mask{}, cand[s][static_cast<std::size_t>(f)]});
      if (!spans[s].empty()) continue;
      // Groups of four copies are searched along lane bits only (replication across lanes is what
      // hardware does; pairs above also try slot masks, e.g. duplicated fragment elements).
      std::vector<Mask> c;
      for (Mask m : cand[s])
        if (m.slot_y == 0) c.push_back(m);
      std::set<std::vector<int>> seen;
      for (std::size_t i = 0; i < c.size(); ++i)
        for (std::size_t j = i + 1; j < c.size(); ++j) {
          const Mask mij = combine(c[i], c[j]);
          const int p1 = apply(*sides[s], rep[s], c[i]), p2 = apply(*sides[s], rep[s], c[j]);
          const int p3 = apply(*sides[s], rep[s], mij);
          if (!partner_ok(*sides[s], p3) || p3 == rep[s] || p3 == p1 || p3 == p2) continue;
          std::vector<int> pts{rep[s], p1, p2, p3};
          std::sort(pts.begin(), pts.end());
          if (!seen.insert(pts).second) continue;  // the same subspace from another basis
          spans2[s].push_back({Mask{}, c[i], c[j], mij});
          sets2[s].push_back(pts);
        }
    }
    if (!sets2[0].empty() || !sets2[1].empty()) {
      auto found2 = try_sets(sets2);  // R2: groups of four copies
      for (int s = 0; s < 2; ++s)
        for (int f : found2[s]) spans[s].push_back(spans2[s][static_cast<std::size_t>(f)]);
    }
    // Choose one hypothesis per side. A unique clean hypothesis is taken; several (possible when a
    // lone copy gives a clean partial result) are told apart by the rows x columns grid their
    // predicted classes must form.
    std::array<int, 2> pick{-1, -1};
    // Predicted D classes per hypothesis, computed on demand (there can be hundreds of hypotheses).
    std::array<std::vector<std::optional<std::vector<int>>>, 2> classes;
    std::array<std::vector<int>, 2> fixed;  // classes of a side without incomplete slots
    for (int s = 0; s < 2; ++s) {
      if (rep[s] < 0) {
        fixed[s] = predict_classes(*sides[s], {});
        continue;
      }
      if (spans[s].size() == 1) pick[s] = 0;
      classes[s].resize(spans[s].size());
    }
    auto classes_of = [&](int s, int h) -> const std::vector<int>& {
      if (h < 0) return fixed[s];
      auto& c = classes[s][static_cast<std::size_t>(h)];
      if (!c) {
        auto orb = orbits(*sides[s], spans[s][static_cast<std::size_t>(h)]);
        c = orb.empty() ? std::vector<int>{} : predict_classes(*sides[s], orb);
      }
      return *c;
    };
    auto options = [&](int s) {
      std::vector<int> o;
      if (rep[s] < 0) o.push_back(-1);
      else
        for (std::size_t h = 0; h < spans[s].size(); ++h) o.push_back(static_cast<int>(h));
      return o;
    };
    if ((rep[0] >= 0 && spans[0].size() > 1) || (rep[1] >= 0 && spans[1].size() > 1)) {
      // Several groupings can describe the same instruction equally well (when a lone copy feeds a
      // clean part of the result, lanes l and l^17 of RDNA3 wave32 form an MMA as valid as l and
      // l^16). Among those whose rows x columns form a grid, prefer the one that agrees with the
      // expected layout's replicas, then the one with the fewest mask bits (the simplest wiring).
      auto score = [&](int s, int h) {
        if (h < 0) return 0;
        const auto& sp = spans[s][static_cast<std::size_t>(h)];
        int bits = 0;
        for (Mask m : sp) bits += __builtin_popcount(static_cast<unsigned>(m.lane_x)) + __builtin_popcount(static_cast<unsigned>(m.slot_y));
        bool agrees = atom_.expected.has_value();
        if (agrees) {
          const OperandLayout& E = s == 0 ? atom_.expected->a : atom_.expected->b;
          for (auto& g : orbits(*sides[s], sp))
            for (int p : g)
              if (E.at_flat(p).ignored() || E.at_flat(p) != E.at_flat(g.front())) agrees = false;
        }
        return (agrees ? 0 : 1000) + bits;
      };
      // Try hypotheses in order of preference; the first pair forming a grid wins.
      auto ordered = [&](int s) {
        auto o = options(s);
        std::vector<int> sc(o.size());
        for (std::size_t i = 0; i < o.size(); ++i) sc[i] = score(s, o[i]);
        std::vector<std::size_t> idx(o.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](auto x, auto y) { return sc[x] < sc[y]; });
        std::vector<int> out;
        for (auto i : idx) out.push_back(o[i]);
        return out;
      };
      const auto oa = ordered(0), ob = ordered(1);
      long tried = 0;
      bool done = false;
      for (int ha : oa) {
        for (int hb : ob) {
          if (++tried > 200000) break;
          const auto& ca = classes_of(0, ha);
          const auto& cb = classes_of(1, hb);
          if (ca.empty() || cb.empty() || !grid_ok(ca, cb)) continue;
          pick = {ha, hb};
          done = true;
          break;
        }
        if (done || tried > 200000) break;
      }
      if (done)
        res_.notes.push_back(std::to_string(oa.size()) + " x " + std::to_string(ob.size()) +
                             " candidate replica groupings (A x B) give clean results; semantics alone may not "
                             "single one out. Took the first forming a rows x columns grid, preferring " +
                             (score(0, pick[0]) + score(1, pick[1]) < 1000 && atom_.expected
                                  ? std::string("the expected layout's replicas")
                                  : std::string("the fewest mask bits")) +
                             "; the random-input verification checks the choice");
      for (int s = 0; s < 2; ++s)
        if (rep[s] >= 0 && pick[s] < 0 && !spans[s].empty()) {
          pick[s] = 0;
          anomaly(std::string(operand_name(sides[s]->op)) + ": " + std::to_string(spans[s].size()) +
                  " replica groupings give clean results and none could be confirmed by the row x column grid; "
                  "took the first");
        }
    }
    for (int s = 0; s < 2; ++s) {
      if (rep[s] < 0) continue;
      Side& sd = *sides[s];
      if (pick[s] < 0) {
        unresolved_all(sd);
        continue;
      }
      const auto& span = spans[s][static_cast<std::size_t>(pick[s])];
      std::vector<char> taken(static_cast<std::size_t>(sd.n), 0);
      for (int i : incomplete(sd)) {
        if (taken[static_cast<std::size_t>(i)]) continue;
        std::vector<int> g;
        bool ok = true;
        for (Mask m : span) {
          const int p = apply(sd, i, m);
          if (!partner_ok(sd, p) || taken[static_cast<std::size_t>(p)] || std::find(g.begin(), g.end(), p) != g.end()) {
            ok = false;
            break;
          }
          g.push_back(p);
        }
        if (!ok) {
          report_unresolved(sd, i);
          continue;
        }
        for (int p : g) taken[static_cast<std::size_t>(p)] = 1;
        std::sort(g.begin(), g.end());
        sd.pending.push_back(g);
      }
    }
  }

  void report_unresolved(Side& sd, int i) {
    const Effect& e = sd.single[static_cast<std::size_t>(i)];
    if (e.bad == 0 && !e.lit.empty()) {
      // A clean but short effect with no replica partner: one element whose row (column) misses
      // some D slots, e.g. because an element of the other operand is held by no slot.
      sd.state[static_cast<std::size_t>(i)] = Classified::complete;
      sd.short_groups.push_back({i});
      sd.short_lit.push_back(e.lit);
      if (sd.short_groups.size() <= 8)
        anomaly(std::string(operand_name(sd.op)) + " " + cell(i, sd.slots) + " lights only " +
                std::to_string(e.lit.size()) + " of " + std::to_string(sd.full) +
                " D slots and no replica group completes it; taken as one element with a short " +
                (sd.op == Operand::A ? "row" : "column"));
      return;
    }
    sd.unresolved.push_back(i);
    anomaly(std::string(operand_name(sd.op)) + " " + cell(i, sd.slots) + " alone gives " +
            (e.bad ? "D " + cell(e.bad_slot, atom_.c_slots) + " = " + num(e.bad_value) + " (not a possible sum)"
                   : std::to_string(e.lit.size()) + " of " + std::to_string(sd.full) + " expected D slots") +
            "; no replica group of at most 4 XOR-related copies makes it clean");
  }
  void unresolved_all(Side& sd) {
    for (int i : incomplete(sd)) report_unresolved(sd, i);
  }

  // ---- P2 -------------------------------------------------------------------------------------
  void phase2() {
    const int na = static_cast<int>(A.pending.size()), nb = static_cast<int>(B.pending.size());
    std::vector<Effect> eff(static_cast<std::size_t>(na + nb));
    run_.run(
        na + nb,
        [&](int e, double* a, double* b, double*) {
          if (e < na) one_sided(0, A.pending[static_cast<std::size_t>(e)], false, a, b);
          else one_sided(1, B.pending[static_cast<std::size_t>(e - na)], false, a, b);
        },
        [&](int e, const double* d) { eff[static_cast<std::size_t>(e)] = effect(d, 1); });
    for (int s = 0; s < 2; ++s) {
      Side& sd = s == 0 ? A : B;
      for (std::size_t g = 0; g < sd.pending.size(); ++g) {
        const Effect& e = eff[static_cast<std::size_t>(s == 0 ? 0 : na) + g];
        const auto& grp = sd.pending[g];
        if (clean_full(e, sd.full)) {
          for (int p : grp) {
            sd.group_of[static_cast<std::size_t>(p)] = static_cast<int>(sd.groups.size());
            sd.state[static_cast<std::size_t>(p)] = Classified::complete;
          }
          sd.groups.push_back(grp);
          sd.lit.push_back(e.lit);
        } else {
          for (int p : grp) {
            sd.group_of[static_cast<std::size_t>(p)] = -1;
            sd.unresolved.push_back(p);
          }
          anomaly(std::string(operand_name(sd.op)) + " replica group {" + cell(grp.front(), sd.slots) + " ...} (" +
                  std::to_string(grp.size()) + " copies) set together still gives " +
                  (e.bad ? "D " + cell(e.bad_slot, atom_.c_slots) + " = " + num(e.bad_value)
                         : std::to_string(e.lit.size()) + " of " + std::to_string(sd.full) + " D slots"));
        }
      }
    }
    for (Side* sd : {&A, &B})
      for (std::size_t g = 0; g < sd->short_groups.size(); ++g) {
        sd->groups.push_back(sd->short_groups[g]);
        sd->lit.push_back(sd->short_lit[g]);
      }
    // Groups must be ordered by their primary so that labels do not depend on discovery order.
    for (Side* sd : {&A, &B}) {
      std::vector<std::size_t> order(sd->groups.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](auto x, auto y) { return sd->groups[x].front() < sd->groups[y].front(); });
      std::vector<std::vector<int>> g2, l2;
      for (auto o : order) {
        g2.push_back(sd->groups[o]);
        l2.push_back(sd->lit[o]);
      }
      sd->groups = std::move(g2);
      sd->lit = std::move(l2);
      std::fill(sd->group_of.begin(), sd->group_of.end(), -1);
      for (std::size_t g = 0; g < sd->groups.size(); ++g)
        for (int p : sd->groups[g]) sd->group_of[static_cast<std::size_t>(p)] = static_cast<int>(g);
    }
  }

  // ---- classes --------------------------------------------------------------------------------
  // Partition the used D slots by the lit sets of one side's groups: class per group, class per D slot.
  int partition(Side& s, std::vector<int>& class_of_group, std::vector<int>& class_of_d, const char* what) {
    // D slots lit by one group share its row (A) or column (B): classes are the connected components.
    // (A short lit set -- an element of the other operand missing -- still joins its class.)
    std::vector<int> uf(static_cast<std::size_t>(nc));
    std::iota(uf.begin(), uf.end(), 0);
    std::function<int(int)> root = [&](int x) {
      return uf[static_cast<std::size_t>(x)] == x ? x : uf[static_cast<std::size_t>(x)] = root(uf[static_cast<std::size_t>(x)]);
    };
    for (const auto& lit : s.lit)
      for (std::size_t i = 1; i < lit.size(); ++i) uf[static_cast<std::size_t>(root(lit[i]))] = root(lit[0]);
    std::map<int, int> ids;
    class_of_group.assign(s.groups.size(), -1);
    class_of_d.assign(static_cast<std::size_t>(nc), -1);
    for (std::size_t g = 0; g < s.groups.size(); ++g) {
      if (s.lit[g].empty()) continue;
      class_of_group[g] = ids.emplace(root(s.lit[g].front()), static_cast<int>(ids.size())).first->second;
    }
    std::vector<int> size(ids.size(), 0);
    int uncovered = 0;
    for (int d = 0; d < nc; ++d) {
      if (!used_[static_cast<std::size_t>(d)]) continue;
      auto it = ids.find(root(d));
      if (it == ids.end()) {
        ++uncovered;
        continue;
      }
      class_of_d[static_cast<std::size_t>(d)] = it->second;
      ++size[static_cast<std::size_t>(it->second)];
    }
    const int want = s.op == Operand::A ? atom_.m : atom_.n;
    const int want_size = s.op == Operand::A ? atom_.n : atom_.m;
    const int got = static_cast<int>(ids.size());
    const int odd = static_cast<int>(std::count_if(size.begin(), size.end(), [&](int x) { return x != want_size; }));
    check(std::string(what) + " classes", got == want && odd == 0 && uncovered == 0,
          std::to_string(got) + " " + what + "s found (expected " + std::to_string(want) + ")" +
              (odd ? "; " + std::to_string(odd) + " of them not " + std::to_string(want_size) + " D slots" : "") +
              (uncovered ? "; " + std::to_string(uncovered) + " used D slots in no " + what : ""));
    return got;
  }

  void classes() {
    n_rows_ = partition(A, row_of_group_, row_of_d_, "row");
    n_cols_ = partition(B, col_of_group_, col_of_d_, "column");
    std::map<std::pair<int, int>, int> seen;
    int dup = 0;
    for (int d = 0; d < nc; ++d) {
      if (!used_[static_cast<std::size_t>(d)]) continue;
      const int r = row_of_d_[static_cast<std::size_t>(d)], c = col_of_d_[static_cast<std::size_t>(d)];
      if (r < 0 || c < 0) continue;
      if (seen[{r, c}]++) ++dup;
    }
    const bool complete = static_cast<int>(seen.size()) == atom_.m * atom_.n;
    check("C/D injective", dup == 0 && complete,
          std::to_string(seen.size()) + " distinct (row, column) pairs over the used D slots, " + std::to_string(dup) +
              " held twice (expected each of the " + std::to_string(atom_.m * atom_.n) + " once)");
  }

  // ---- P3 -------------------------------------------------------------------------------------
  std::vector<int> uf_;
  int find(int x) { return uf_[static_cast<std::size_t>(x)] == x ? x : uf_[static_cast<std::size_t>(x)] = find(uf_[static_cast<std::size_t>(x)]); }
  void unite(int x, int y) { uf_[static_cast<std::size_t>(find(x))] = find(y); }

  void phase3() {
    const int GA = static_cast<int>(A.groups.size()), GB = static_cast<int>(B.groups.size());
    uf_.resize(static_cast<std::size_t>(GA + GB));
    std::iota(uf_.begin(), uf_.end(), 0);
    if (GA == 0 || GB == 0) return;
    // Position of each B group within its column, and the exact value it carries.
    std::vector<std::vector<int>> col_groups(static_cast<std::size_t>(n_cols_));
    std::vector<int> pos(static_cast<std::size_t>(GB), -1);
    for (int g = 0; g < GB; ++g) {
      auto& v = col_groups[static_cast<std::size_t>(col_of_group_[static_cast<std::size_t>(g)])];
      pos[static_cast<std::size_t>(g)] = static_cast<int>(v.size());
      v.push_back(g);
    }
    std::size_t widest = 0;
    for (auto& v : col_groups) widest = std::max(widest, v.size());
    const auto bval = exact_values({atom_.b_type, atom_.c_type}, static_cast<int>(widest) + 1);
    // Ignored slots carry noise louder than any matching: a read one adds at least noise - max|bval|
    // (> max|bval|) to some D value, which then is no B value of its column, or makes a D value that
    // must be 0 nonzero. Types too narrow for it keep a quieter noise (1 for A, an unused B value).
    double loudest = 0;
    for (std::size_t t = 0; t < widest; ++t) loudest = std::max(loudest, std::fabs(bval[t]));
    const double noise_a = exact_value_above({atom_.a_type, atom_.c_type}, 2 * loudest).value_or(1.0);
    const double noise_b = exact_value_above({atom_.b_type, atom_.c_type}, 2 * loudest).value_or(bval.back());
    std::vector<double> bfrag(static_cast<std::size_t>(B.n), 0.0);
    for (int i = 0; i < B.n; ++i) {
      const int g = B.group_of[static_cast<std::size_t>(i)];
      if (g >= 0) bfrag[static_cast<std::size_t>(i)] = bval[static_cast<std::size_t>(pos[static_cast<std::size_t>(g)])];
      else if (B.is_ignored(i)) bfrag[static_cast<std::size_t>(i)] = noise_b;
    }
    // A groups are packed one per row: a group reaches only its own row (P1), so experiment e sets
    // the e-th A group of every row and each D row answers for its own group -- about K experiments.
    std::vector<std::vector<int>> row_groups(static_cast<std::size_t>(n_rows_));
    for (int g = 0; g < GA; ++g)
      if (const int r = row_of_group_[static_cast<std::size_t>(g)]; r >= 0) row_groups[static_cast<std::size_t>(r)].push_back(g);
    std::size_t deepest = 0;
    for (const auto& v : row_groups) deepest = std::max(deepest, v.size());
    auto group_at = [&](int row, int e) {
      const auto& v = row_groups[static_cast<std::size_t>(row)];
      return static_cast<std::size_t>(e) < v.size() ? v[static_cast<std::size_t>(e)] : -1;
    };
    int a_misses = 0, stray = 0;
    run_.run(
        static_cast<int>(deepest),
        [&](int e, double* a, double* b, double*) {
          for (int i = 0; i < A.n; ++i)
            if (A.is_ignored(i)) a[i] = noise_a;  // an ignored slot that is read shows up below
          for (int r = 0; r < n_rows_; ++r)
            if (const int g = group_at(r, e); g >= 0)
              for (int i : A.groups[static_cast<std::size_t>(g)]) a[i] = 1;
          std::copy(bfrag.begin(), bfrag.end(), b);
        },
        [&](int e, const double* d) {
          for (int i = 0; i < nc; ++i) {
            if (!used_[static_cast<std::size_t>(i)]) continue;
            const double v = d[i];
            const int ri = row_of_d_[static_cast<std::size_t>(i)], ci = col_of_d_[static_cast<std::size_t>(i)];
            const int g = ri < 0 || ci < 0 ? -1 : group_at(ri, e);
            if (g < 0) {
              if (v != 0 && stray++ < 8)
                anomaly("k matching, experiment " + std::to_string(e) + ": D " + cell(i, atom_.c_slots) + " = " +
                        num(v) + " where no A element of this experiment reaches");
              continue;
            }
            const auto& cg = col_groups[static_cast<std::size_t>(ci)];
            int hit = -1;
            for (std::size_t t = 0; t < cg.size(); ++t)
              if (bval[t] == v) hit = static_cast<int>(t);
            if (hit < 0) {
              if (a_misses++ < 8)
                anomaly("k matching: A group " + cell(A.groups[static_cast<std::size_t>(g)].front(), A.slots) +
                        " x encoded B: D " + cell(i, atom_.c_slots) + " = " + num(v) +
                        (v == 0 ? ": this A element meets no B element of the column"
                                : ": not the value of any B element of the column"));
              continue;
            }
            unite(g, GA + cg[static_cast<std::size_t>(hit)]);
          }
        });
    // k classes: one A group per row and one B group per column in each, K of them.
    std::map<int, std::pair<std::vector<int>, std::vector<int>>> comp;  // root -> (rows, cols)
    for (int g = 0; g < GA; ++g) comp[find(g)].first.push_back(row_of_group_[static_cast<std::size_t>(g)]);
    for (int g = 0; g < GB; ++g) comp[find(GA + g)].second.push_back(col_of_group_[static_cast<std::size_t>(g)]);
    int bad = 0;
    for (auto& [root, rc] : comp) {
      auto rows = rc.first, cols = rc.second;
      std::sort(rows.begin(), rows.end());
      std::sort(cols.begin(), cols.end());
      const bool rows_ok = static_cast<int>(rows.size()) == n_rows_ &&
                           std::adjacent_find(rows.begin(), rows.end()) == rows.end();
      const bool cols_ok = static_cast<int>(cols.size()) == n_cols_ &&
                           std::adjacent_find(cols.begin(), cols.end()) == cols.end();
      if (!rows_ok || !cols_ok) ++bad;
    }
    n_k_ = static_cast<int>(comp.size());
    check("k classes", bad == 0 && n_k_ == atom_.k,
          std::to_string(n_k_) + " k classes (expected " + std::to_string(atom_.k) + "), " + std::to_string(bad) +
              " without exactly one A element per row and one B element per column");
    check("A covers each (m, k) once", bad == 0 && static_cast<int>(A.groups.size()) == atom_.m * atom_.k,
          std::to_string(A.groups.size()) + " distinct A elements (expected M*K = " + std::to_string(atom_.m * atom_.k) + ")");
    check("B covers each (k, n) once", bad == 0 && static_cast<int>(B.groups.size()) == atom_.k * atom_.n,
          std::to_string(B.groups.size()) + " distinct B elements (expected K*N = " + std::to_string(atom_.k * atom_.n) + ")");
  }


  // ---- P4: the derived layout must predict D for random inputs --------------------------------
  void verify() {
    const MmaLayout& L = res_.derived;
    bool identity = true;
    for (int i = 0; i < nc; ++i)
      if (used_[static_cast<std::size_t>(i)] && res_.c_to_d[static_cast<std::size_t>(i)] != i) identity = false;
    if (!res_.checks_ok() || !identity || !L.a.covers_all() || !L.b.covers_all() || !L.c.covers_all()) {
      check("random-input verification", false, "skipped: the derived layout is incomplete or inconsistent");
      return;
    }
    constexpr int kTrials = 4;
    const int M = atom_.m, N = atom_.n, K = atom_.k;
    std::mt19937 rng(20240601u);
    std::uniform_int_distribution<int> in(-1, 2), cv(-4, 4);
    std::vector<std::vector<double>> av(kTrials), bv(kTrials), cvals(kTrials);
    std::vector<std::vector<double>> noise_a(kTrials), noise_b(kTrials);
    for (int t = 0; t < kTrials; ++t) {
      av[t].resize(static_cast<std::size_t>(M * K));
      bv[t].resize(static_cast<std::size_t>(K * N));
      cvals[t].resize(static_cast<std::size_t>(M * N));
      for (auto& v : av[t]) v = in(rng);
      for (auto& v : bv[t]) v = in(rng);
      for (auto& v : cvals[t]) v = cv(rng);
      noise_a[t].resize(static_cast<std::size_t>(A.n));
      noise_b[t].resize(static_cast<std::size_t>(B.n));
      for (auto& v : noise_a[t]) v = in(rng);
      for (auto& v : noise_b[t]) v = in(rng);
    }
    int wrong = 0;
    std::string first;
    run_.run(
        kTrials,
        [&](int t, double* a, double* b, double* c) {
          for (int i = 0; i < A.n; ++i) {
            const Coord x = L.a.at_flat(i);
            a[i] = x.ignored() ? noise_a[t][static_cast<std::size_t>(i)] : av[t][static_cast<std::size_t>(x.row * K + x.col)];
          }
          for (int i = 0; i < B.n; ++i) {
            const Coord x = L.b.at_flat(i);
            b[i] = x.ignored() ? noise_b[t][static_cast<std::size_t>(i)] : bv[t][static_cast<std::size_t>(x.row * N + x.col)];
          }
          for (int i = 0; i < nc; ++i) {
            const Coord x = L.c.at_flat(i);
            c[i] = x.ignored() ? 0 : cvals[t][static_cast<std::size_t>(x.row * N + x.col)];
          }
        },
        [&](int t, const double* d) {
          for (int i = 0; i < nc; ++i) {
            const Coord x = L.c.at_flat(i);
            if (x.ignored()) continue;
            double want = cvals[t][static_cast<std::size_t>(x.row * N + x.col)];
            for (int k = 0; k < K; ++k)
              want += av[t][static_cast<std::size_t>(x.row * K + k)] * bv[t][static_cast<std::size_t>(k * N + x.col)];
            if (d[i] != want && wrong++ == 0)
              first = "trial " + std::to_string(t) + ": D " + cell(i, atom_.c_slots) + " = " + num(d[i]) + ", predicted " + num(want);
          }
        });
    check("random-input verification", wrong == 0,
          wrong == 0 ? std::to_string(kTrials) + " random experiments (replicas equal, noise in ignored slots) give "
                                                  "exactly the D the derived layout predicts"
                     : std::to_string(wrong) + " D values differ from the prediction; first: " + first);
  }

  // ---- labels and the derived layout ----------------------------------------------------------
  struct Labels {
    std::vector<int> row, col, k;  // class -> label
  };

  Labels canonical() {
    const int GA = static_cast<int>(A.groups.size());
    Labels L;
    L.row.assign(static_cast<std::size_t>(n_rows_), -1);
    L.col.assign(static_cast<std::size_t>(n_cols_), -1);
    std::map<int, int> k_of_root;
    int nr = 0, nk = 0, ncl = 0;
    for (int i = 0; i < A.n; ++i) {
      const int g = A.group_of[static_cast<std::size_t>(i)];
      if (g < 0) continue;
      int& r = L.row[static_cast<std::size_t>(row_of_group_[static_cast<std::size_t>(g)])];
      if (r < 0) r = nr++;
      if (!k_of_root.count(find(g))) k_of_root[find(g)] = nk++;
    }
    for (int i = 0; i < B.n; ++i) {
      const int g = B.group_of[static_cast<std::size_t>(i)];
      if (g < 0) continue;
      int& c = L.col[static_cast<std::size_t>(col_of_group_[static_cast<std::size_t>(g)])];
      if (c < 0) c = ncl++;
      if (!k_of_root.count(find(GA + g))) k_of_root[find(GA + g)] = nk++;
    }
    L.k.assign(uf_.size(), -1);
    for (std::size_t x = 0; x < uf_.size(); ++x) L.k[x] = k_of_root.count(find(static_cast<int>(x))) ? k_of_root[find(static_cast<int>(x))] : -1;
    return L;
  }

  // k labels are stored per union-find node (A groups then B groups).
  MmaLayout make_layout(const Labels& L) {
    const int GA = static_cast<int>(A.groups.size());
    MmaLayout m{OperandLayout(atom_.m, atom_.k, W, atom_.a_slots), OperandLayout(atom_.k, atom_.n, W, atom_.b_slots),
                OperandLayout(atom_.m, atom_.n, W, atom_.c_slots)};
    auto put = [](OperandLayout& l, int i, int r, int c) {
      if (r >= 0 && c >= 0 && r < l.rows() && c < l.cols()) l.set_flat(i, Coord{r, c});
    };
    for (int g = 0; g < GA; ++g)
      for (int i : A.groups[static_cast<std::size_t>(g)])
        put(m.a, i, L.row[static_cast<std::size_t>(row_of_group_[static_cast<std::size_t>(g)])], L.k[static_cast<std::size_t>(g)]);
    for (std::size_t g = 0; g < B.groups.size(); ++g)
      for (int i : B.groups[g])
        put(m.b, i, L.k[static_cast<std::size_t>(GA) + g], L.col[static_cast<std::size_t>(col_of_group_[g])]);
    for (int d = 0; d < nc; ++d) {
      if (!used_[static_cast<std::size_t>(d)]) continue;
      const int r = row_of_d_[static_cast<std::size_t>(d)], c = col_of_d_[static_cast<std::size_t>(d)];
      if (r >= 0 && c >= 0) put(m.c, d, L.row[static_cast<std::size_t>(r)], L.col[static_cast<std::size_t>(c)]);
    }
    return m;
  }

  // Labels from the expected layout by majority vote, as a bijection; nullopt if none.
  std::optional<Labels> expected_labels(const MmaLayout& E) {
    const int GA = static_cast<int>(A.groups.size());
    const auto nodes = uf_.size();
    std::map<std::pair<int, int>, int> vr, vc, vk;  // (derived class, expected label) -> votes
    for (int g = 0; g < GA; ++g)
      for (int i : A.groups[static_cast<std::size_t>(g)]) {
        const Coord e = E.a.at_flat(i);
        if (e.ignored()) continue;
        ++vr[{row_of_group_[static_cast<std::size_t>(g)], e.row}];
        ++vk[{find(g), e.col}];
      }
    for (std::size_t g = 0; g < B.groups.size(); ++g)
      for (int i : B.groups[g]) {
        const Coord e = E.b.at_flat(i);
        if (e.ignored()) continue;
        ++vk[{find(GA + static_cast<int>(g)), e.row}];
        ++vc[{col_of_group_[g], e.col}];
      }
    for (int d = 0; d < nc; ++d) {
      const Coord e = E.c.at_flat(d);
      if (!used_[static_cast<std::size_t>(d)] || e.ignored()) continue;
      if (row_of_d_[static_cast<std::size_t>(d)] >= 0) ++vr[{row_of_d_[static_cast<std::size_t>(d)], e.row}];
      if (col_of_d_[static_cast<std::size_t>(d)] >= 0) ++vc[{col_of_d_[static_cast<std::size_t>(d)], e.col}];
    }
    auto assign = [](const std::map<std::pair<int, int>, int>& votes, int n_derived, int n_expected,
                     std::vector<int>& out) {
      std::vector<std::tuple<int, int, int>> v;
      for (auto& [key, cnt] : votes) v.emplace_back(-cnt, key.first, key.second);
      std::sort(v.begin(), v.end());
      std::map<int, int> fwd;
      std::vector<char> taken(static_cast<std::size_t>(n_expected), 0);
      for (auto& [negc, dcls, elab] : v) {
        if (fwd.count(dcls) || elab < 0 || elab >= n_expected || taken[static_cast<std::size_t>(elab)]) continue;
        fwd[dcls] = elab;
        taken[static_cast<std::size_t>(elab)] = 1;
      }
      if (static_cast<int>(fwd.size()) != n_derived) return false;
      for (auto& [d, e] : fwd) out[static_cast<std::size_t>(d)] = e;
      return true;
    };
    if (n_rows_ != atom_.m || n_cols_ != atom_.n || n_k_ != atom_.k) return std::nullopt;
    Labels L;
    L.row.assign(static_cast<std::size_t>(n_rows_), -1);
    L.col.assign(static_cast<std::size_t>(n_cols_), -1);
    std::vector<int> k_by_root(nodes, -1);
    if (!assign(vr, n_rows_, atom_.m, L.row) || !assign(vc, n_cols_, atom_.n, L.col)) return std::nullopt;
    // k: the derived classes are union-find roots.
    std::map<int, int> root_index;
    for (std::size_t x = 0; x < nodes; ++x) root_index.emplace(find(static_cast<int>(x)), static_cast<int>(root_index.size()));
    std::map<std::pair<int, int>, int> vk2;
    for (auto& [key, cnt] : vk) vk2[{root_index[key.first], key.second}] += cnt;
    std::vector<int> k_of_index(root_index.size(), -1);
    if (!assign(vk2, static_cast<int>(root_index.size()), atom_.k, k_of_index)) return std::nullopt;
    L.k.assign(nodes, -1);
    for (std::size_t x = 0; x < nodes; ++x) L.k[x] = k_of_index[static_cast<std::size_t>(root_index[find(static_cast<int>(x))])];
    return L;
  }

  void build_layout() {
    if (atom_.expected && opt_.use_expected_labels) {
      if (auto L = expected_labels(*atom_.expected)) {
        MmaLayout m = make_layout(*L);
        auto d = diff(*atom_.expected, m);
        const std::size_t total = static_cast<std::size_t>(A.n + B.n + nc);
        if (d.size() * 2 <= total) {
          res_.derived = std::move(m);
          res_.labels_from_expected = true;
          res_.diff = std::move(d);
          res_.verdict = res_.diff.empty() ? Verdict::matches : Verdict::differs;
          return;
        }
      }
    }
    res_.derived = make_layout(canonical());
    res_.labels_from_expected = false;
    res_.verdict = atom_.expected ? Verdict::not_isomorphic : Verdict::no_expected;
  }

  const AtomDesc& atom_;
  Executor& ex_;
  ProbeOptions opt_;
  Runner run_;
  ProbeResult res_;
  int W = 0, nc = 0;
  Side A, B;
  std::vector<char> used_;
  int used_count_ = 0;
  int n_rows_ = 0, n_cols_ = 0, n_k_ = 0;
  std::vector<int> row_of_group_, col_of_group_, row_of_d_, col_of_d_;
};

}  // namespace

ProbeResult probe(const AtomDesc& atom, Executor& executor, const ProbeOptions& options) {
  if (atom.wave <= 0 || atom.a_slots <= 0 || atom.b_slots <= 0 || atom.c_slots <= 0 || atom.m <= 0 || atom.n <= 0 ||
      atom.k <= 0)
    throw std::invalid_argument("probe: atom '" + atom.name + "' has a non-positive shape, wave or slot count");
  Engine e(atom, executor, options);
  return e.go();
}

}  // namespace flashprobe::probes
