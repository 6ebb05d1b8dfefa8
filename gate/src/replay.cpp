#include "flashprobe/gate/replay.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "flashprobe/core/error.h"

namespace flashprobe::gate {
namespace {

constexpr const char* kForm = "kernel=NAME|plugin=PATH property=NAME [dtype=f16|bf16|f32] rc=REPRODUCE";

bool plain(unsigned char ch) { return ch > 0x20 && ch < 0x7f && ch != '%' && ch != '\'' && ch != '"' && ch != '\\'; }

std::string encode(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    if (plain(ch)) {
      out += static_cast<char>(ch);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      out += buf;
    }
  }
  return out;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
      throw UsageError("--replay: '" + s + "' has a '%' not followed by two hex digits; the line's form: " + kForm);
    out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    i += 2;
  }
  return out;
}

}  // namespace

std::string format_replay(const ReplayLine& r) {
  std::string s = r.kind + "=" + encode(r.ref) + " property=" + encode(r.property);
  if (!r.dtype.empty()) s += " dtype=" + encode(r.dtype);
  return s + " rc=" + encode(r.reproduce);
}

ReplayLine parse_replay(const std::string& line) {
  std::map<std::string, std::string> kv;
  std::istringstream in(line);
  std::string word;
  ReplayLine r;
  while (in >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--replay: '" + word + "' is not key=value; the line's form: " + kForm);
    const std::string key = word.substr(0, eq), value = decode(word.substr(eq + 1));
    if (kv.count(key)) throw UsageError("--replay: '" + key + "' appears twice; the line's form: " + kForm);
    kv[key] = value;
    if (key == "kernel" || key == "plugin" || key == "host") {
      if (!r.kind.empty()) throw UsageError("--replay: names two subjects (" + r.kind + " and " + key + "); the line's form: " + kForm);
      r.kind = key;
      r.ref = value;
    } else if (key == "property") {
      r.property = value;
    } else if (key == "dtype") {
      r.dtype = value;
    } else if (key == "rc") {
      r.reproduce = value;
    } else {
      throw UsageError("--replay: unknown key '" + key + "'; the line's form: " + kForm);
    }
  }
  if (r.kind.empty() || r.ref.empty()) throw UsageError("--replay: the line names no subject (kernel=NAME or plugin=PATH); its form: " + std::string(kForm));
  if (r.property.empty()) throw UsageError("--replay: the line names no property=NAME; its form: " + std::string(kForm));
  if (r.reproduce.empty()) throw UsageError("--replay: the line has no rc=REPRODUCE; its form: " + std::string(kForm));
  return r;
}

std::string replay_command(const ReplayLine& r) { return "flashprobe gate --replay '" + format_replay(r) + "'"; }

}  // namespace flashprobe::gate
