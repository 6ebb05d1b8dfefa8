// flashprobe list: the atoms, kernels and mutants present in this build (sections register themselves).
#include <iostream>

#include "command.h"

namespace flashprobe::cli {
namespace {
CommandRegistration reg("list", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand("list", "List the atoms, kernels and mutants in this build");
  auto section = std::make_shared<std::string>();
  sub->add_option("section", *section, "Only this section (atoms, kernels, mutants)");
  return [section] {
    std::vector<std::string> names{"atoms", "kernels", "mutants"};
    for (auto& s : list_sections())
      if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
    if (!section->empty() && std::find(names.begin(), names.end(), *section) == names.end()) {
      std::cerr << "flashprobe list: unknown section '" << *section << "' (known:";
      for (auto& n : names) std::cerr << " " << n;
      std::cerr << ")\n";
      return 2;
    }
    for (auto& n : names) {
      if (!section->empty() && n != *section) continue;
      std::vector<std::string> entries;
      for (auto& s : list_sections())
        if (s.name == n) {
          auto e = s.fn();
          entries.insert(entries.end(), e.begin(), e.end());
        }
      std::cout << n << " (" << entries.size() << "):\n";
      for (auto& e : entries) std::cout << "  " << e << "\n";
    }
    return 0;
  };
});
}  // namespace
}  // namespace flashprobe::cli
