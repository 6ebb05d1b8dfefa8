// Not built with flashprobe: the generator of tests/plugin/data/cudnn-frontend-graphs/ (README there).
// NVIDIA cudnn-frontend's SDPA forward for one problem, built against the stand-in cuDNN of
// fake_cudnn.cpp so that FAKE_CUDNN_LOG records the backend descriptors the frontend sets. Needs a
// checkout of github.com/NVIDIA/cudnn-frontend (header-only) and cuDNN 9's headers:
//
//   g++ -std=c++17 -DNV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING -I<cudnn-frontend>/include -I<cuda>/include \
//       tests/plugin/cudnn_frontend_graph.cpp -o cudnn_frontend_graph -ldl
//   FAKE_CUDNN_LOG=x.log ./cudnn_frontend_graph <build>/tests/plugin/libfp_fake_cudnn.so none|composite|top_left|bottom_right f16|bf16
//   python3 tests/scripts/cudnn_graph_text.py <cuda>/include/cudnn_graph.h x.log
//
// The problem is the golden files': batch 2, hq 8, hkv 2, sq 100, sk 300, d 128, dv 64, contiguous
// BSHD, scale 1/8, stats written. `none` lets the frontend choose (its unified SDPA operation),
// `composite` asks for its composite graph.
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include <cudnn_frontend.h>

namespace fe = cudnn_frontend;
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;  // the frontend's dynamic loading reads cuDNN's entry points from here
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: cudnn_frontend_graph <libfp_fake_cudnn.so> none|composite|top_left|bottom_right f16|bf16\n");
    return 2;
  }
  fe::cudnn_dlhandle = dlopen(argv[1], RTLD_NOW);
  if (!fe::cudnn_dlhandle) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  const std::string mask = argv[2], type = argv[3];
  const int64_t b = 2, hq = 8, hk = 2, sq = 100, sk = 300, d = 128, dv = 64;
  auto create = reinterpret_cast<cudnnStatus_t (*)(cudnnHandle_t*)>(dlsym(fe::cudnn_dlhandle, "cudnnCreate"));
  cudnnHandle_t handle;
  create(&handle);
  fe::graph::Graph g;
  g.set_io_data_type(type == "bf16" ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  g.set_sm_version(90);  // no device here: a Hopper target
  using T = fe::graph::Tensor_attributes;
  auto q = g.tensor(T().set_name("Q").set_uid(1).set_dim({b, hq, sq, d}).set_stride({sq * hq * d, d, hq * d, 1}));
  auto k = g.tensor(T().set_name("K").set_uid(2).set_dim({b, hk, sk, d}).set_stride({sk * hk * d, d, hk * d, 1}));
  auto v = g.tensor(T().set_name("V").set_uid(3).set_dim({b, hk, sk, dv}).set_stride({sk * hk * dv, dv, hk * dv, 1}));
  auto options = fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(true).set_attn_scale(0.125f);
  if (mask == "composite") options.set_implementation(fe::AttentionImplementation_t::COMPOSITE);
  if (mask == "top_left" || mask == "bottom_right")
    options
        .set_diagonal_alignment(mask == "top_left" ? fe::DiagonalAlignment_t::TOP_LEFT : fe::DiagonalAlignment_t::BOTTOM_RIGHT)
        .set_diagonal_band_right_bound(0);
  auto [o, stats] = g.sdpa(q, k, v, options);
  o->set_output(true).set_uid(4).set_dim({b, hq, sq, dv}).set_stride({sq * hq * dv, dv, hq * dv, 1});
  stats->set_output(true).set_uid(5).set_data_type(fe::DataType_t::FLOAT);
  if (auto e = g.validate(); e.is_bad()) {
    std::fprintf(stderr, "validate: %s\n", e.get_message().c_str());
    return 1;
  }
  if (auto e = g.build_operation_graph(handle); e.is_bad()) {
    std::fprintf(stderr, "build_operation_graph: %s\n", e.get_message().c_str());
    return 1;
  }
  return 0;
}
