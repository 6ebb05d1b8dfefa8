/* flashprobe plug-in ABI, version 1: property-test your own attention kernel in-process.
 *
 * A plug-in is a shared library exporting one C function:
 *
 *     const fp_plugin_v1* flashprobe_plugin_v1(void);
 *
 * returning a descriptor that lives as long as the library. flashprobe calls `supports` for every
 * generated problem and `launch` only for problems it accepted; all pointers in fp_tensors_v1 are
 * device pointers (allocated with guard bands and poisoned by flashprobe), strides are in elements.
 * `launch` must be asynchronous on `stream` or synchronous; flashprobe synchronizes and checks
 * the last error after it. Return 0 on success, non-zero with a message in `err` on failure.
 *
 * Compatibility: a host accepts a descriptor whose abi_version equals FLASHPROBE_PLUGIN_ABI_VERSION
 * and whose struct_size is at least the size it knows (fields are only ever appended).
 *
 * Example (see plugin/example/naive_plugin.cu):
 *     static int supports(const fp_problem_v1* p, char* why, size_t n) { ... return 1; }
 *     static int launch(const fp_problem_v1* p, const fp_tensors_v1* t, char* err, size_t n) { ... }
 *     static const fp_plugin_v1 desc = {FLASHPROBE_PLUGIN_ABI_VERSION, sizeof(fp_plugin_v1),
 *                                       "naive", "one thread per query row", supports, launch};
 *     extern "C" const fp_plugin_v1* flashprobe_plugin_v1(void) { return &desc; }
 */
#ifndef FLASHPROBE_PLUGIN_H
#define FLASHPROBE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLASHPROBE_PLUGIN_ABI_VERSION 1u

enum fp_dtype_v1 { FP_DTYPE_F16 = 0, FP_DTYPE_BF16 = 1, FP_DTYPE_F32 = 2 };
enum fp_causal_v1 { FP_CAUSAL_NONE = 0, FP_CAUSAL_BOTTOM_RIGHT = 1, FP_CAUSAL_TOP_LEFT = 2 };

/* The attention problem; semantics as in flashprobe's docs/attention-semantics.md. A C++20 plug-in
   may mask exactly as flashprobe checks with flashprobe/core/mask.h (header-only, host and device:
   mask::diag_offset, mask::narrow, mask::kv_head). */
typedef struct fp_problem_v1 {
  int32_t batch, hq, hkv, sq, sk, d, dv;
  int32_t dtype;     /* enum fp_dtype_v1, of Q, K, V */
  int32_t out_dtype; /* enum fp_dtype_v1, of O; LSE is always f32 [batch, hq, sq] contiguous */
  int64_t q_strides[4], k_strides[4], v_strides[4], o_strides[4]; /* [b, s, h, d], elements */
  double scale;      /* already resolved: never 0 */
  int32_t causal;    /* enum fp_causal_v1 */
  int32_t kv_offset; /* tokens already in the cache, or 0 (not stated); when > 0, flashprobe has checked
                        that every batch element holds kv_offset + sq keys, so the mask (built from
                        sk or seqlens_k and sq) needs nothing from it */
  int32_t window_left, window_right; /* -1 = unbounded */
  double softcap;    /* 0 = off */
  const double* alibi_slopes;        /* host, hq entries, or NULL */
  const int32_t* seqlens_k;          /* host, batch entries, or NULL */
} fp_problem_v1;

typedef struct fp_tensors_v1 {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  const int32_t* seqlens_k; /* device copy of problem->seqlens_k, or NULL */
  const float* alibi_slopes; /* device copy as f32, or NULL */
  void* stream;             /* cudaStream_t / hipStream_t */
} fp_tensors_v1;

typedef struct fp_plugin_v1 {
  uint32_t abi_version; /* FLASHPROBE_PLUGIN_ABI_VERSION */
  uint32_t struct_size; /* sizeof(fp_plugin_v1) */
  const char* name;
  const char* description;
  /* 1 if the problem is supported; else 0 with the reason (naming the field) written to why. */
  int (*supports)(const fp_problem_v1* p, char* why, size_t why_len);
  /* 0 on success; else non-zero with a message written to err. */
  int (*launch)(const fp_problem_v1* p, const fp_tensors_v1* t, char* err, size_t err_len);
} fp_plugin_v1;

typedef const fp_plugin_v1* (*fp_plugin_entry_v1)(void);
#define FLASHPROBE_PLUGIN_ENTRY_V1 "flashprobe_plugin_v1"

/* Optional, appended: a backward kernel. A plug-in that has one also exports
 *
 *     const fp_plugin_backward_v1* flashprobe_plugin_backward_v1(void);
 *
 * (same abi_version and struct_size rules). `launch` computes dQ, dK, dV of L = sum(dO * O) for the
 * problem (flashprobe's oracle/backward.h defines them) from Q, K, V, the forward's O and LSE and dO. */
typedef struct fp_backward_tensors_v1 {
  const void* q;
  const void* k;
  const void* v;
  const void* o;     /* the forward's O (out_dtype, o_strides) */
  const float* lse;  /* the forward's LSE, f32 [batch, hq, sq] contiguous, natural log */
  const void* dout;  /* dO: out_dtype at o_strides */
  void* dq;          /* dtype at q_strides */
  void* dk;          /* dtype at k_strides, summed over the query heads of each kv head's group */
  void* dv;          /* dtype at v_strides, summed likewise */
  const int32_t* seqlens_k;  /* device copy of problem->seqlens_k, or NULL */
  const float* alibi_slopes; /* device copy as f32, or NULL */
  void* stream;              /* cudaStream_t / hipStream_t */
} fp_backward_tensors_v1;

typedef struct fp_plugin_backward_v1 {
  uint32_t abi_version; /* FLASHPROBE_PLUGIN_ABI_VERSION */
  uint32_t struct_size; /* sizeof(fp_plugin_backward_v1) */
  const char* name;
  const char* description;
  int (*supports)(const fp_problem_v1* p, char* why, size_t why_len);
  int (*launch)(const fp_problem_v1* p, const fp_backward_tensors_v1* t, char* err, size_t err_len);
} fp_plugin_backward_v1;

typedef const fp_plugin_backward_v1* (*fp_plugin_backward_entry_v1)(void);
#define FLASHPROBE_PLUGIN_BACKWARD_ENTRY_V1 "flashprobe_plugin_backward_v1"

#ifdef __cplusplus
}
#endif
#endif /* FLASHPROBE_PLUGIN_H */
