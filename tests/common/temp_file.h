#pragma once
// A file of the given text under GoogleTest's temporary folder (a test's input: a problem list, a
// case, an unreadable path's neighbour); returns its path.
//   const std::string path = flashprobe::testing::write_temp_file("one.json", R"({"batch": 1})");
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace flashprobe::testing {

inline std::string write_temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) ADD_FAILURE() << "cannot write " << path;
  else std::fputs(text.c_str(), f.get());
  return path;
}

}  // namespace flashprobe::testing
