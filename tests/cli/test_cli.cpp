// The CLI contract: exit codes (0 ok, 1 check failed, 2 bad usage) and the no-GPU behaviour.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <sys/wait.h>

namespace {
struct Result { int code; std::string out; };
// The executable built beside this test, or $FLASHPROBE_EXE (a GPU machine runs copies elsewhere).
std::string exe() {
  const char* e = std::getenv("FLASHPROBE_EXE");
  return e ? e : FLASHPROBE_EXE;
}
Result run(const std::string& args) {
  const std::string cmd = exe() + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p.get())) out += buf.data();
  const int status = pclose(p.release());
  return {WEXITSTATUS(status), out};
}
}  // namespace

TEST(Cli, UnknownCommandExits2WithUsage) {
  auto r = run("nonsense");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
}

TEST(Cli, UnknownOptionExits2) {
  auto r = run("devices --frobnicate");
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(Cli, NoCommandExits2) { EXPECT_EQ(run("").code, 2); }

TEST(Cli, VersionNamesTheCommit) {
  auto r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("commit"), std::string::npos) << r.out;
}

TEST(Cli, DevicesExitsZeroWithOrWithoutAGpu) {
  auto r = run("devices");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(r.out.find("none: no GPU device") != std::string::npos || r.out.find("arch ") != std::string::npos)
      << r.out;
}

TEST(Cli, ListShowsItsSections) {
  auto r = run("list");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* s : {"atoms (", "kernels (", "mutants ("}) EXPECT_NE(r.out.find(s), std::string::npos) << r.out;
  EXPECT_EQ(run("list nosuchsection").code, 2);
}
