// flashprobe: layout probes, an attention oracle and property tests for attention kernels.
#include <cstdio>
#include <iostream>
#include <map>
#include <new>

#include "command.h"
#include "flashprobe/core/build_info.h"
#include "flashprobe/core/error.h"

namespace flashprobe::cli {

namespace {
std::vector<std::pair<std::string, SetupFn>>& commands() {
  static std::vector<std::pair<std::string, SetupFn>> c;
  return c;
}
}  // namespace

CommandRegistration::CommandRegistration(std::string name, SetupFn setup) {
  commands().emplace_back(std::move(name), std::move(setup));
}
std::vector<ListSection>& list_sections() {
  static std::vector<ListSection> s;
  return s;
}
ListSectionRegistration::ListSectionRegistration(std::string section, ListFn fn) {
  list_sections().push_back({std::move(section), std::move(fn)});
}

}  // namespace flashprobe::cli

int main(int argc, char** argv) {
  using namespace flashprobe;
  CLI::App app{"flashprobe: matrix-instruction layout probes, an attention oracle and property tests "
               "for attention kernels"};
  app.set_version_flag("--version", std::string("flashprobe ") + version() + " (commit " + commit() +
                                        ", backend " + backend() + ")");
  app.require_subcommand(1);
  std::map<CLI::App*, cli::RunFn> runs;
  auto& cmds = cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [name, setup] : cmds) {
    auto before = app.get_subcommands({});
    cli::RunFn run = setup(app);
    for (auto* sub : app.get_subcommands({}))
      if (std::find(before.begin(), before.end(), sub) == before.end()) runs[sub] = run;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "flashprobe: " << e.what() << "\n\n" << app.help();
    return 2;
  }
  try {
    for (auto* sub : app.get_subcommands())
      if (auto it = runs.find(sub); it != runs.end()) return it->second();
    std::cerr << app.help();
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "flashprobe: " << e.what() << "\n";
    return 2;
  } catch (const NoDevice& e) {
    std::cerr << "flashprobe: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "flashprobe: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {  // exit 1 is only ever a failed check
    std::cerr << "flashprobe: error: " << e.what() << "\n";
    return 2;
  }
}
