#include <map>
#include <mutex>
#include <stdexcept>

#include "flashprobe/probes/executor.h"
#include "flashprobe/probes/load_path.h"

namespace flashprobe::probes {

FragmentBatch::FragmentBatch(int experiments, int lanes, int slots_a, int slots_b, int slots_c)
    : count(experiments), wave(lanes), a_slots(slots_a), b_slots(slots_b), c_slots(slots_c) {
  if (count < 0 || wave <= 0 || a_slots <= 0 || b_slots <= 0 || c_slots <= 0)
    throw std::invalid_argument("FragmentBatch: count must be >= 0 and wave, slots positive");
  a_data.assign(static_cast<std::size_t>(count) * wave * a_slots, 0.0);
  b_data.assign(static_cast<std::size_t>(count) * wave * b_slots, 0.0);
  c_data.assign(static_cast<std::size_t>(count) * wave * c_slots, 0.0);
}

namespace {
std::map<std::string, ExecutorFactory, std::less<>>& factories() {
  static std::map<std::string, ExecutorFactory, std::less<>> f;
  return f;
}
std::map<std::string, LoadExecutorFactory, std::less<>>& load_factories() {
  static std::map<std::string, LoadExecutorFactory, std::less<>> f;
  return f;
}
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void register_executor(const std::string& atom_name, ExecutorFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  factories()[atom_name] = std::move(factory);
}

bool has_hardware_executor(std::string_view atom_name) {
  register_hardware_executors();
  std::lock_guard<std::mutex> lock(registry_mutex());
  return factories().find(atom_name) != factories().end();
}

std::unique_ptr<Executor> make_hardware_executor(const AtomDesc& atom, std::string& why_not) {
  register_hardware_executors();
  ExecutorFactory f;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = factories().find(atom.name);
    if (it == factories().end()) {
      why_not = "this build has no hardware executor for " + atom.name;
      return nullptr;
    }
    f = it->second;
  }
  auto ex = f(atom, why_not);
  if (!ex && why_not.empty()) why_not = "the executor for " + atom.name + " declined without a reason";
  return ex;
}

void register_load_executor(const std::string& atom_name, LoadExecutorFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  load_factories()[atom_name] = std::move(factory);
}

bool has_hardware_load_executor(std::string_view atom_name) {
  register_hardware_executors();
  std::lock_guard<std::mutex> lock(registry_mutex());
  return load_factories().find(atom_name) != load_factories().end();
}

std::unique_ptr<LoadExecutor> make_hardware_load_executor(const LoadAtomDesc& atom, std::string& why_not) {
  register_hardware_executors();
  LoadExecutorFactory f;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = load_factories().find(atom.name);
    if (it == load_factories().end()) {
      why_not = "this build has no hardware load-path executor for " + atom.name;
      return nullptr;
    }
    f = it->second;
  }
  auto ex = f(atom, why_not);
  if (!ex && why_not.empty()) why_not = "the load executor for " + atom.name + " declined without a reason";
  return ex;
}

}  // namespace flashprobe::probes
