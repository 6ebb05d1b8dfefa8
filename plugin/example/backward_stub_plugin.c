/* A host-only plug-in exporting both entry points, for the loader's tests: its backward accepts
   problems with d <= 64 and its launch reports an error (it has no device code). */
#include <stdio.h>

#include "flashprobe/plugin/flashprobe_plugin.h"
static int supports(const fp_problem_v1* p, char* why, size_t n) { (void)p; (void)why; (void)n; return 1; }
static int launch(const fp_problem_v1* p, const fp_tensors_v1* t, char* e, size_t n) { (void)p; (void)t; (void)e; (void)n; return 0; }
static int bwd_supports(const fp_problem_v1* p, char* why, size_t n) {
  if (p->d <= 64) return 1;
  snprintf(why, n, "d=%d: the stub's backward takes d <= 64", (int)p->d);
  return 0;
}
static int bwd_launch(const fp_problem_v1* p, const fp_backward_tensors_v1* t, char* e, size_t n) {
  (void)t;
  snprintf(e, n, "stub backward: no device code (asked for b%d hq%d)", (int)p->batch, (int)p->hq);
  return 1;
}
static const fp_plugin_v1 desc = {FLASHPROBE_PLUGIN_ABI_VERSION, sizeof(fp_plugin_v1), "stub", "host-only", supports, launch};
static const fp_plugin_backward_v1 bwd = {FLASHPROBE_PLUGIN_ABI_VERSION, sizeof(fp_plugin_backward_v1), "stub_bwd", "host-only",
                                          bwd_supports, bwd_launch};
__attribute__((visibility("default"))) const fp_plugin_v1* flashprobe_plugin_v1(void) { return &desc; }
__attribute__((visibility("default"))) const fp_plugin_backward_v1* flashprobe_plugin_backward_v1(void) { return &bwd; }
