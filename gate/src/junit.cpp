#include "flashprobe/gate/junit.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "flashprobe/core/error.h"

namespace flashprobe::gate {
namespace {

std::string hex_byte(unsigned char c) {
  char b[8];
  std::snprintf(b, sizeof b, "\\x%02X", c);
  return b;
}

// Length of the valid UTF-8 sequence at s[i] (0 when invalid).
std::size_t utf8_len(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s);
  return b;
}

std::string testcase_text(const Outcome& o) {
  std::ostringstream t;
  t << o.verdict.why << "\n";
  if (!o.counterexample.is_null()) t << "\nshrunk case:\n" << o.counterexample.dump(2) << "\n";
  if (!o.replay.empty()) t << "\nreproduce:\n" << o.replay << "\n";
  if (!o.message.empty() && o.verdict.status == GateStatus::failed) t << "\nRapidCheck:\n" << o.message << "\n";
  return t.str();
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_len(s, i);
      if (n == 0) {
        out += hex_byte(c);
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': case '\n': case '\r': out += static_cast<char>(c); break;
      default:
        if (c < 0x20 || c == 0x7F) out += hex_byte(c);
        else out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string junit_xml(const std::vector<Outcome>& outcomes, const Allowance& allowed) {
  // Suites in the order their subjects first appear.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Outcome*>> by;
  for (const auto& o : outcomes) {
    const std::string key = o.kind == "kernel" ? o.subject : o.kind + " " + o.subject;
    if (!by.count(key)) order.push_back(key);
    by[key].push_back(&o);
  }
  long tests = 0, failures = 0, errors = 0, skipped = 0;
  double total = 0;
  std::ostringstream suites;
  for (const auto& key : order) {
    long t = 0, f = 0, e = 0, sk = 0;
    double secs = 0;
    std::ostringstream cases;
    for (const Outcome* o : by[key]) {
      ++t;
      secs += o->seconds;
      const std::string cls = "flashprobe.gate." + key;
      cases << "    <testcase classname=\"" << xml_escape(cls) << "\" name=\"" << xml_escape(o->property) << "\" time=\""
            << seconds(o->seconds) << "\">\n";
      const bool fail = fails_gate(o->verdict, o->property, allowed);
      if (o->verdict.status == GateStatus::failed) {
        ++f;
        cases << "      <failure type=\"failed\" message=\"" << xml_escape(o->verdict.why.substr(0, 500)) << "\">"
              << xml_escape(testcase_text(*o)) << "</failure>\n";
      } else if (o->verdict.status == GateStatus::not_exercised && fail && o->verdict.cause == Unexercised::memory) {
        // The harness's own shortage: an error of the run, not a failure of the kernel (nor a pass).
        ++e;
        cases << "      <error type=\"device_memory\" message=\"not exercised: " << xml_escape(o->verdict.why.substr(0, 500))
              << "\">the harness could not allocate the device memory this property needs; the kernel is not blamed and the "
                 "property is not counted as held (pass --allow-not-exercised " << xml_escape(o->property) << " to accept it)\n"
              << xml_escape(o->verdict.why) << "</error>\n";
      } else if (o->verdict.status == GateStatus::not_exercised && fail) {
        ++f;
        cases << "      <failure type=\"not_exercised\" message=\"not exercised: " << xml_escape(o->verdict.why.substr(0, 500))
              << "\">not exercised (zero cases ran) and not allowed: pass --allow-not-exercised " << xml_escape(o->property)
              << " to accept it\n" << xml_escape(o->verdict.why) << "</failure>\n";
      } else if (o->verdict.status == GateStatus::not_exercised) {
        ++sk;
        cases << "      <skipped message=\"not exercised (allowed): " << xml_escape(o->verdict.why.substr(0, 500)) << "\"/>\n";
      }
      std::ostringstream so;
      so << "cases: " << o->facts.cases_run << " run of " << o->cases_asked << " asked, " << o->facts.discarded << " discarded, "
         << o->facts.refusals << " problems refused by supports(); seed " << o->seed;
      if (o->facts.budget_spent) so << "; the time budget cut the run short";
      if (o->replayed) so << "; a replay of one shrunk case";
      so << "\nstatus: " << gate_status_name(o->verdict.status) << (o->verdict.cause != Unexercised::none ? " (" + std::string(unexercised_name(o->verdict.cause)) + ")" : "");
      cases << "      <system-out>" << xml_escape(so.str()) << "</system-out>\n    </testcase>\n";
    }
    suites << "  <testsuite name=\"" << xml_escape(key) << "\" tests=\"" << t << "\" failures=\"" << f << "\" errors=\"" << e << "\" skipped=\""
           << sk << "\" time=\"" << seconds(secs) << "\">\n" << cases.str() << "  </testsuite>\n";
    tests += t;
    failures += f;
    errors += e;
    skipped += sk;
    total += secs;
  }
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"flashprobe gate\" tests=\"" << tests << "\" failures=\"" << failures
    << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << seconds(total) << "\">\n" << suites.str() << "</testsuites>\n";
  return x.str();
}

void write_junit(const std::string& path, const std::vector<Outcome>& outcomes, const Allowance& allowed) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw UsageError("--junit " + path + ": cannot be written");
  f << junit_xml(outcomes, allowed);
  if (!f.flush()) throw UsageError("--junit " + path + ": writing failed");
}

}  // namespace flashprobe::gate
