#pragma once
// The flashprobe CLI is a set of subcommands, each in its own cmd_*.cpp, registering itself here at
// static-initialisation time (the cmd files are compiled straight into the executable, so nothing is
// dropped by the linker). A command's run function returns the exit code: 0 success, 1 a check
// failed, 2 bad usage or input (throwing flashprobe::UsageError also gives 2).
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace flashprobe::cli {

using RunFn = std::function<int()>;
// Add the subcommand to `app` and return what runs it once parsed.
using SetupFn = std::function<RunFn(CLI::App& app)>;

struct CommandRegistration {
  CommandRegistration(std::string name, SetupFn setup);
};

// Sections of `flashprobe list` (atoms, kernels, mutants, ...): each prints one entry per line.
using ListFn = std::function<std::vector<std::string>()>;
struct ListSectionRegistration {
  ListSectionRegistration(std::string section, ListFn fn);
};

struct ListSection {
  std::string name;
  ListFn fn;
};
std::vector<ListSection>& list_sections();

}  // namespace flashprobe::cli
