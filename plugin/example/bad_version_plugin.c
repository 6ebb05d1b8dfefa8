/* A plug-in built against a future ABI: the loader must refuse it with a message naming the versions. */
#include "flashprobe/plugin/flashprobe_plugin.h"
static int supports(const fp_problem_v1* p, char* why, size_t n) { (void)p; (void)why; (void)n; return 1; }
static int launch(const fp_problem_v1* p, const fp_tensors_v1* t, char* e, size_t n) { (void)p; (void)t; (void)e; (void)n; return 0; }
static const fp_plugin_v1 desc = {FLASHPROBE_PLUGIN_ABI_VERSION + 1, sizeof(fp_plugin_v1), "future", "", supports, launch};
__attribute__((visibility("default"))) const fp_plugin_v1* flashprobe_plugin_v1(void) { return &desc; }
