// `flashprobe check` end to end: NPY files written here, the real executable run, exit codes 0/1/2.
#include <gtest/gtest.h>

#include "../common/run_cli.h"

#include <array>
#include <cctype>
#include <cstring>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "flashprobe/core/npy.h"
#include "flashprobe/core/problem_io.h"
#include "flashprobe/core/record.h"
#include "flashprobe/oracle/reference.h"
#include "flashprobe/oracle/simulated.h"
#include "flashprobe/oracle/simulated_backward.h"

using namespace flashprobe;
namespace fs = std::filesystem;

namespace {
using Result = flashprobe::testing::CliResult;
Result run(const std::string& args) { return flashprobe::testing::run_cli(args); }

NpyArray npy_of(const Tensor& t, std::vector<std::int64_t> shape) {
  NpyArray a;
  a.type = t.dtype == DType::f16 ? NpyType::f2 : t.dtype == DType::bf16 ? NpyType::u2 : NpyType::f4;
  a.shape = std::move(shape);
  a.data = t.bytes;
  return a;
}

// One case on disk: problem.json, q/k/v/o/lse.npy written from a correct simulated kernel.
class CheckCli : public ::testing::Test {
 protected:
  void write_case(const AttnProblem& p) {
    p_ = p;
    dir_ = fs::temp_directory_path() / ("fp_check_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    nlohmann::json j = p;
    write_json_file(path("problem.json"), j);
    in_ = random_inputs(p, 42);
    out_ = oracle::run_simulated(oracle::simulated_kernel("flash_bk64_exp2"), p, in_);
    const std::int64_t B = p.batch, Sq = p.sq, Sk = p.sk, Hq = p.hq, Hkv = p.hkv;
    npy_save(path("q.npy"), npy_of(in_.q, {B, Sq, Hq, p.d}));
    npy_save(path("k.npy"), npy_of(in_.k, {B, Sk, Hkv, p.d}));
    npy_save(path("v.npy"), npy_of(in_.v, {B, Sk, Hkv, p.dv}));
    save_o(out_.o);
    NpyArray l;
    l.type = NpyType::f4;
    l.shape = {B, Hq, Sq};
    l.data.resize(out_.lse.size() * 4);
    std::memcpy(l.data.data(), out_.lse.data(), l.data.size());
    npy_save(path("lse.npy"), l);
  }
  // do.npy, dq.npy, dk.npy, dv.npy from a correct simulated backward reading the saved O and LSE.
  void write_backward() {
    bw_ = {random_normal(p_.out_dtype, p_.o_span(), 43), out_.o, out_.lse};
    grads_ = oracle::run_simulated_backward(oracle::simulated_backward_kernel("fa2_b64"), p_, in_, bw_);
    npy_save(path("do.npy"), npy_of(bw_.dout, {p_.batch, p_.sq, p_.hq, p_.dv}));
    npy_save(path("dq.npy"), npy_of(grads_.dq, {p_.batch, p_.sq, p_.hq, p_.d}));
    save_dk(grads_.dk);
    npy_save(path("dv.npy"), npy_of(grads_.dv, {p_.batch, p_.sk, p_.hkv, p_.dv}));
  }
  void save_dk(const Tensor& dk) { npy_save(path("dk.npy"), npy_of(dk, {p_.batch, p_.sk, p_.hkv, p_.d})); }
  std::string grad_args() const {
    return " --do " + path("do.npy") + " --dq " + path("dq.npy") + " --dk " + path("dk.npy") + " --dv " + path("dv.npy");
  }
  void save_o(const Tensor& o) { npy_save(path("o.npy"), npy_of(o, {p_.batch, p_.sq, p_.hq, p_.dv})); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& f) const { return (dir_ / f).string(); }
  std::string args(const std::string& extra = "") const {
    return "check --problem " + path("problem.json") + " --q " + path("q.npy") + " --k " + path("k.npy") + " --v " +
           path("v.npy") + " --o " + path("o.npy") + " --lse " + path("lse.npy") + " " + extra;
  }
  static AttnProblem gqa_causal(DType t) {
    AttnProblem p;
    p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 20; p.sk = 70; p.d = 40; p.dv = 40;
    p.dtype = p.out_dtype = t;
    p.causal = Causal::bottom_right;
    return p;
  }
  fs::path dir_;
  AttnProblem p_;
  AttnInputs in_;
  AttnOutputs out_;
  oracle::BackwardInputs bw_;
  oracle::KernelGradients grads_;
};
}  // namespace

TEST_F(CheckCli, CorrectOutputPassesWithExit0AndWritesARecord) {
  write_case(gqa_causal(DType::f16));
  const auto r = run(args("--json " + path("rec.json")));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("PASS ", 0), 0u) << r.out;
  const auto j = read_json_file(path("rec.json"));
  EXPECT_EQ(j["schema"], "flashprobe.check/1");
  EXPECT_EQ(j["pass"], true);
  EXPECT_EQ(j["case_id"], p_.id());
}

TEST_F(CheckCli, OneCorruptedOutputElementFailsWithExit1) {
  write_case(gqa_causal(DType::bf16));
  Tensor o = out_.o;
  const std::int64_t i = offset(p_.o_strides(), 1, 17, 2, 5);
  o.set(i, o.get(i) + 0.125);
  save_o(o);
  const auto r = run(args());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("b1 row17 h2 x5"), std::string::npos) << r.out;
}

TEST_F(CheckCli, Bf16SavedAsInt16IsAccepted) {
  write_case(gqa_causal(DType::bf16));
  for (const char* f : {"q.npy", "k.npy", "v.npy", "o.npy"}) {  // numpy of tensor.view(torch.int16)
    std::ifstream in(path(f), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.replace(bytes.find("<u2"), 3, "<i2");
    std::ofstream(path(f), std::ios::binary) << bytes;
  }
  const auto r = run(args());
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST_F(CheckCli, RowSamplingStillCatchesNanAnywhere) {
  write_case(gqa_causal(DType::f16));
  EXPECT_EQ(run(args("--rows 3")).code, 0);
  Tensor o = out_.o;
  o.set(offset(p_.o_strides(), 0, 9, 1, 0), NAN);
  save_o(o);
  const auto r = run(args("--rows 3 --seed 5"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("nan 1"), std::string::npos) << r.out;
}

TEST_F(CheckCli, BadInputsExit2NamingTheFileAndTheProblem) {
  write_case(gqa_causal(DType::f16));
  // Missing file.
  auto r = run("check --problem " + path("problem.json") + " --q " + path("nope.npy") + " --k " + path("k.npy") +
               " --v " + path("v.npy") + " --o " + path("o.npy"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("nope.npy"), std::string::npos) << r.out;
  // Q with the shape of O under another name: [B, Sq, Hq, D] is checked against the problem.
  npy_save(path("q.npy"), npy_of(in_.q, {p_.batch, p_.hq, p_.sq, p_.d}));
  r = run(args());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("q.npy: Q has shape [2,4,20,40] but the problem needs [2,20,4,40]"), std::string::npos) << r.out;
  npy_save(path("q.npy"), npy_of(in_.q, {p_.batch, p_.sq, p_.hq, p_.d}));
  // K stored as f32 for an f16 problem.
  Tensor k32(DType::f32, in_.k.size());
  for (std::int64_t i = 0; i < k32.size(); ++i) k32.set(i, in_.k.get(i));
  npy_save(path("k.npy"), npy_of(k32, {p_.batch, p_.sk, p_.hkv, p_.d}));
  r = run(args());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("k.npy: K is stored as <f4 but the problem's dtype is f16"), std::string::npos) << r.out;
  npy_save(path("k.npy"), npy_of(in_.k, {p_.batch, p_.sk, p_.hkv, p_.d}));
  // Truncated O.
  fs::resize_file(path("o.npy"), fs::file_size(path("o.npy")) - 10);
  r = run(args());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("o.npy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("truncated"), std::string::npos) << r.out;
  // A problem field that is not allowed.
  write_json_file(path("problem.json"), nlohmann::json{{"batch", 2}, {"hq", 4}, {"hkv", 3}});
  r = run(args());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("hq=4 is not a multiple of hkv=3"), std::string::npos) << r.out;
}

TEST_F(CheckCli, RefOMeasuresAgreementWithAnotherDoubleReference) {
  write_case(gqa_causal(DType::bf16));
  const oracle::Reference ref = oracle::reference(p_, in_);
  NpyArray a;
  a.type = NpyType::f8;
  a.shape = {p_.batch, p_.sq, p_.hq, p_.dv};
  a.data.resize(ref.o.size() * 8);
  std::memcpy(a.data.data(), ref.o.data(), a.data.size());
  npy_save(path("o64.npy"), a);
  const std::string base = "check --problem " + path("problem.json") + " --q " + path("q.npy") + " --k " + path("k.npy") +
                           " --v " + path("v.npy") + " --ref-o " + path("o64.npy");
  auto r = run(base);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("AGREE", 0), 0u) << r.out;
  double v;
  std::memcpy(&v, a.data.data() + 8 * 100, 8);
  v *= 1 + 1e-9;
  std::memcpy(a.data.data() + 8 * 100, &v, 8);
  npy_save(path("o64.npy"), a);
  r = run(base);
  EXPECT_EQ(r.code, 1) << r.out;
}

// kv_offset states the cache before the new tokens: sk must be kv_offset + sq (exit 2 otherwise),
// and a consistent one checks as the same problem without it.
TEST_F(CheckCli, KvOffsetThatContradictsSkIsABadProblem) {
  AttnProblem p = gqa_causal(DType::f16);  // sq 20, sk 70
  p.kv_offset = 50;
  write_case(p);
  EXPECT_EQ(run(args()).code, 0);
  nlohmann::json j = p;
  j["kv_offset"] = 49;
  write_json_file(path("problem.json"), j);
  const auto r = run(args());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("kv_offset=49 with sq=20 means the cache holds kv_offset + sq = 69 keys, but sk=70"),
            std::string::npos) << r.out;
}

TEST_F(CheckCli, GradientsGoInTheSameRecordUnderBackward) {
  write_case(gqa_causal(DType::bf16));
  write_backward();
  const auto r = run(args("--json " + path("rec.json") + grad_args()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\nbackward PASS " + p_.id() + "  dQ max_abs"), std::string::npos) << r.out;
  const auto j = read_json_file(path("rec.json"));
  EXPECT_EQ(j["pass"], true);
  EXPECT_EQ(j["backward"]["pass"], true);
  for (const char* g : {"dq", "dk", "dv"}) EXPECT_LE(j["backward"][g]["margin"].get<double>(), 1.0) << g;
  EXPECT_EQ(j["files"]["dk"], path("dk.npy"));
}

TEST_F(CheckCli, OneWrongGradientElementFailsWithExit1) {
  write_case(gqa_causal(DType::f16));
  write_backward();
  Tensor dk = grads_.dk;
  const std::int64_t i = offset(p_.k_strides(), 1, 33, 1, 7);
  dk.set(i, dk.get(i) + 0.25);
  save_dk(dk);
  const auto r = run(args("--json " + path("rec.json") + grad_args()));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("dK max_abs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("b1 key33 h1 x7"), std::string::npos) << r.out;
  const auto j = read_json_file(path("rec.json"));
  EXPECT_EQ(j["pass"], true);  // the forward's own verdict
  EXPECT_EQ(j["backward"]["pass"], false);
  EXPECT_EQ(j["backward"]["dq"]["pass"], true);
}

TEST_F(CheckCli, GradientsWithoutTheForwardsOutputsUseTheEmulatedForward) {
  write_case(gqa_causal(DType::f16));
  write_backward();
  const auto r = run("check --problem " + path("problem.json") + " --q " + path("q.npy") + " --k " + path("k.npy") +
                     " --v " + path("v.npy") + " --do " + path("do.npy") + " --dv " + path("dv.npy"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("backward PASS", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("dQ"), std::string::npos) << r.out;
}

TEST_F(CheckCli, BadGradientInputsExit2) {
  write_case(gqa_causal(DType::f16));
  write_backward();
  auto r = run(args("--dq " + path("dq.npy")));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("needs --do"), std::string::npos) << r.out;
  r = run(args("--do " + path("do.npy")));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("none of --dq, --dk, --dv"), std::string::npos) << r.out;
  npy_save(path("dk.npy"), npy_of(grads_.dk, {p_.batch, p_.sk, p_.hkv * p_.group(), p_.d / p_.group()}));
  r = run(args(grad_args()));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("dk.npy: dK has shape"), std::string::npos) << r.out;
}

// Errors that are not a failed check exit 2, naming the file and what is wrong in it. Before, a
// 30-digit NPY dimension (std::out_of_range) and /dev/zero (std::bad_alloc after reading gigabytes)
// exited 1, the code of a failed check, naming no file.
TEST_F(CheckCli, UnreadableInputsExit2NamingTheFile) {
  write_case(gqa_causal(DType::f16));
  const std::string good = args();
  auto with = [&](const std::string& flag, const std::string& file) {
    std::string a = good;
    const std::string from = flag + " " + path(flag.substr(2) + ".npy");
    a.replace(a.find(from), from.size(), flag + " " + file);
    return run(a);
  };
  auto r = with("--q", dir_.string());  // a directory
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir_.string() + ": is a directory"), std::string::npos) << r.out;
  r = with("--k", "/dev/zero");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/dev/zero: not a valid NPY file"), std::string::npos) << r.out;
  std::string dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (123456789012345678901234567890, 20, 4, 40), }";
  dict.append(127 - 10 - dict.size(), ' ');
  std::ofstream(path("big.npy"), std::ios::binary) << "\x93NUMPY\x01" << '\0' << static_cast<char>(dict.size() + 1)
                                                   << '\0' << dict << '\n';
  r = with("--v", path("big.npy"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(path("big.npy") + ": not a valid NPY file: header: a 'shape' dimension"), std::string::npos) << r.out;
  r = with("--o", path("absent.npy"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(path("absent.npy") + ": cannot open NPY file: No such file"), std::string::npos) << r.out;
}

// A --json that cannot be written stops the command before the check (it printed PASS, then exit 2).
TEST_F(CheckCli, UnwritableJsonIsRefusedBeforeTheCheck) {
  write_case(gqa_causal(DType::f16));
  for (const std::string& json : {path("no-such-dir/rec.json"), dir_.string()}) {
    const auto r = run(args("--json " + json));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(json + ": "), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(path("no-such-dir")));
}

// A problem JSON the reader refuses is exit 2 naming the problem file, the field and the value as
// written (a lenient reader read "batch": 4294967297 as 1 and passed the check).
TEST_F(CheckCli, ProblemValuesAreReadStrictly) {
  write_case(AttnProblem{});
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"batch", "4294967297"}, {"sq", "4294967300"}, {"batch", "1.7"}, {"batch", "true"}, {"dtype", "\"half\""},
           {"causal", "true"}}) {
    nlohmann::json j = p_;
    j[field] = nlohmann::json::parse(value);
    write_json_file(path("problem.json"), j);
    const auto r = run(args());
    EXPECT_EQ(r.code, 2) << field << " " << value << ": " << r.out;
    EXPECT_NE(r.out.find(path("problem.json") + ": problem field '" + field + "'"), std::string::npos) << r.out;
    const std::string shown = value[0] == '"' ? value.substr(1, value.size() - 2) : value;  // 'half' in the message
    EXPECT_NE(r.out.find(shown), std::string::npos) << r.out;
  }
}

// check --help documents every field the problem reader knows (its own table), the exit codes, how
// bf16 is stored and the diagonal convention of windows and ALiBi under top_left.
TEST(CheckHelp, ListsEveryProblemFieldTheExitCodesAndTheConventions) {
  const auto r = flashprobe::testing::run_cli("check --help");
  EXPECT_EQ(r.code, 0) << r.out;
  std::string flat;  // lines are wrapped: compare with runs of white space as one space
  for (char c : r.out)
    if (!std::isspace(static_cast<unsigned char>(c))) flat += c;
    else if (!flat.empty() && flat.back() != ' ') flat += ' ';
  for (const auto& f : problem_fields()) {
    EXPECT_NE(r.out.find("\n  " + std::string(f.name) + " "), std::string::npos) << f.name;
    EXPECT_NE(flat.find(std::string(f.allowed)), std::string::npos) << f.allowed;
  }
  for (const char* s : {"Exit codes: 0 the check passed; 1 the check failed", "; 2 anything else",
                        "bf16 is stored as its 16-bit patterns, <u2 or <i2",
                        "with causal top_left, windows and ALiBi are measured from the top-left diagonal"})
    EXPECT_NE(flat.find(s), std::string::npos) << s << "\n" << r.out;
}

// A NaN in an input is bad input (exit 2) named by file, tensor and position, unless
// --allow-nan-inputs, which checks IEEE propagation instead (a correct output passes).
TEST_F(CheckCli, NanInAnInputIsNamedAndAllowedOnRequest) {
  write_case(gqa_causal(DType::f16));
  in_.k.set(offset(p_.k_strides(), 1, 33, 0, 7), NAN);
  npy_save(path("k.npy"), npy_of(in_.k, {p_.batch, p_.sk, p_.hkv, p_.d}));
  out_ = oracle::run_simulated(oracle::simulated_kernel("flash_bk64_exp2"), p_, in_);
  save_o(out_.o);
  std::remove(path("lse.npy").c_str());
  const std::string base = "check --problem " + path("problem.json") + " --q " + path("q.npy") + " --k " + path("k.npy") +
                           " --v " + path("v.npy") + " --o " + path("o.npy") + " --json " + path("rec.json");
  auto r = run(base);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("K holds NaN at [1, 33, 0, 7]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--allow-nan-inputs"), std::string::npos) << r.out;
  r = run(base + " --allow-nan-inputs");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("nan "), std::string::npos) << r.out;  // the rows that read key 33 are NaN
  EXPECT_EQ(read_json_file(path("rec.json"))["tolerance"]["allow_nan_inputs"], true);
}
