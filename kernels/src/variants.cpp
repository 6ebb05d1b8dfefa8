// The named variants (variants.h): parsing a name into a production kernel's entry with its
// launch's measurement choices set. Pure host code, in every build.
#include "flashprobe/kernels/variants.h"

#include <map>
#include <string_view>

#include "flashprobe/core/error.h"
#include "src/variant_makers.h"

namespace flashprobe::kernels {
namespace {

constexpr int kMaxCount = 65535;  // splits and blocks: a grid dimension's limit

[[noreturn]] void bad(const std::string& name, const std::string& why) {
  throw UsageError("kernel variant '" + name + "': " + why + " (allowed: " + variant_syntax() + ")");
}

// "key=value,key=value" into a map; an option given twice or without '=' is an error.
std::map<std::string, std::string> options_of(const std::string& name, std::string_view rest) {
  std::map<std::string, std::string> opts;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      bad(name, std::string("'").append(item).append("' is not an option=value pair"));
    const std::string key(item.substr(0, eq));
    if (!opts.emplace(key, std::string(item.substr(eq + 1))).second) bad(name, "option '" + key + "' is given twice");
    if (comma == std::string_view::npos) return opts;
    rest.remove_prefix(comma + 1);
  }
}

int count_of(const std::string& name, const std::string& key, const std::string& v) {
  const bool digits = !v.empty() && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos;
  const long n = digits ? std::stol(v) : 0;
  if (!digits || n < 1 || n > kMaxCount)
    bad(name, key + "=" + v + ": must be an integer in [1, " + std::to_string(kMaxCount) + "]");
  return static_cast<int>(n);
}

// Takes the option `key` out of opts, or "" when absent.
std::string take(std::map<std::string, std::string>& opts, const std::string& key) {
  const auto it = opts.find(key);
  if (it == opts.end()) return {};
  std::string v = it->second;
  opts.erase(it);
  return v;
}

void no_other_options(const std::string& name, const std::string& kernel, const std::map<std::string, std::string>& opts,
                      const char* known) {
  if (!opts.empty()) bad(name, kernel + " has no option '" + opts.begin()->first + "' (its options: " + known + ")");
}

KernelInfo mma_variant(const std::string& name, std::map<std::string, std::string> opts) {
  detail::MmaOptions o;
  std::string canon = "mma/", desc = "mma (benchmarks and tests):";
  const std::string order = take(opts, "order"), rescale = take(opts, "rescale"), classes = take(opts, "classes"),
                    small = take(opts, "small");
  no_other_options(name, "mma", opts, "order, rescale, classes, small");
  if (!order.empty()) {
    if (order == "rows") o.order = dev::MmaOrderChoice::rows;
    else if (order == "heads") o.order = dev::MmaOrderChoice::heads;
    else bad(name, "order=" + order + ": must be rows or heads (the shipped mma chooses by the mask)");
    canon += "order=" + order;
    desc += " block order forced to " + order + "_inner where it fits the grid;";
  }
  if (!rescale.empty()) {
    if (rescale != "lazy") bad(name, "rescale=" + rescale + ": must be lazy (the shipped mma rescales always)");
    o.rescale = dev::MmaRescale::lazy;
    canon += std::string(order.empty() ? "" : ",") + "rescale=lazy";
    desc += " conditional rescale, threshold 2^8 (d = 128);";
  }
  if (!classes.empty()) {
    if (classes != "coarse")
      bad(name, "classes=" + classes + ": must be coarse (the shipped mma runs the fine ladder 32, 64, 80, 96, 128, 160, "
                "192, 256; coarse is the one without 32, 160 and 192)");
    o.coarse_classes = true;
    canon += std::string(canon == "mma/" ? "" : ",") + "classes=coarse";
    desc += " head dims in the tile classes 64, 80, 96, 128, 256 (no 32, 160, 192; NVIDIA);";
  }
  if (!small.empty()) {
    if (small == "plain") o.small = dev::MmaSmall::plain;
    else if (small == "fma") o.small = dev::MmaSmall::fma;
    else if (small == "c32") o.small = dev::MmaSmall::c32;
    else if (small == "occ") o.small = dev::MmaSmall::occ;
    else bad(name, "small=" + small + ": must be plain, fma, c32 or occ (the shipped mma runs d, dv < 64 in its soft-cap/ALiBi instantiation)");
    canon += std::string(canon == "mma/" ? "" : ",") + "small=" + small;
    desc += " d, dv <= 64 below 64/64 without soft-cap or ALiBi in a class-64 instantiation without their code";
    desc += small == "fma"   ? ", " + std::to_string(dev::kMmaSmallFmaTiles) + " of 8 score tiles' exp2 on the FMA units (NVIDIA);"
            : small == "c32" ? ", d, dv <= 32 in a 32-wide class of their own (NVIDIA);"
            : small == "occ" ? ", d, dv <= 32 in the 32-wide class; registers capped for 4 blocks per SM there and 3 in "
                               "class 64 (NVIDIA);"
                             : ", exp2 on the MUFU (NVIDIA);";
  }
  return make_mma(canon, desc, o);
}

KernelInfo wgmma_variant(const std::string& name, std::map<std::string, std::string> opts) {
  detail::WgmmaOptions o;
  std::string canon = "wgmma/", desc = "wgmma (benchmarks and tests):";
  const std::string schedule = take(opts, "schedule"), carry = take(opts, "carry"), l2ahead = take(opts, "l2ahead"),
                    epilogue = take(opts, "epilogue"), mask = take(opts, "mask"), grid = take(opts, "grid"),
                    blocks = take(opts, "blocks"), classes = take(opts, "classes"), stages = take(opts, "stages"),
                    align = take(opts, "align");
  no_other_options(name, "wgmma", opts, "schedule, carry, l2ahead, epilogue, mask, align, grid, blocks, classes, stages");
  const auto add = [&canon](const std::string& kv) { canon += (canon.back() == '/' ? "" : ",") + kv; };
  if (!schedule.empty()) {
    if (schedule == "serial") o.schedule = dev::WgmmaSchedule::serial;
    else if (schedule == "overlap") o.schedule = dev::WgmmaSchedule::overlap;
    else bad(name, "schedule=" + schedule + ": must be serial or overlap (the shipped wgmma is pingpong)");
    if (!detail::kWgmmaAllSchedules)
      bad(name, "schedule=" + schedule + " is not in this build: configure with -DFLASHPROBE_WGMMA_SCHEDULES=ON");
    add("schedule=" + schedule);
    desc += " the " + schedule + " consumer schedule;";
  }
  if (!carry.empty()) {
    if (carry != "on") bad(name, "carry=" + carry + ": must be on (the shipped wgmma starts each row block anew)");
    if (!detail::kWgmmaAllSchedules)
      bad(name, "carry=on is not in this build (it measured slower than the shipped wgmma): configure with "
                "-DFLASHPROBE_WGMMA_SCHEDULES=ON");
    if (!schedule.empty()) bad(name, "carry=on and schedule=" + schedule + ": the carried walk is built for pingpong only");
    o.carry = true;
    add("carry=on");
    desc += " a row block's first S issued with the previous row block's last P V (d, dv <= 128, no soft-cap or ALiBi);";
  }
  if (!l2ahead.empty()) {
    if (l2ahead != "on") bad(name, "l2ahead=" + l2ahead + ": must be on (the shipped wgmma prefetches nothing into the L2)");
    if (!schedule.empty()) bad(name, "l2ahead=on and schedule=" + schedule + ": the L2 prefetch is built for pingpong only");
    if (!carry.empty()) bad(name, "l2ahead=on and carry=on: the two are built as separate kernels, not together");
    o.l2ahead = true;
    add("l2ahead=on");
    desc += " the next row block's Q and first K/V tiles prefetched into the L2 (d, dv <= 128, no soft-cap or ALiBi);";
  }
  if (!epilogue.empty()) {
    if (epilogue != "pairs")
      bad(name, "epilogue=" + epilogue + ": must be pairs (the shipped wgmma stores O in 16-byte pieces where built)");
    if (!schedule.empty()) bad(name, "epilogue=pairs and schedule=" + schedule + ": built for pingpong only (the other schedules store pairs anyway)");
    if (!carry.empty() || !l2ahead.empty())
      bad(name, std::string("epilogue=pairs and ") + (carry.empty() ? "l2ahead=on" : "carry=on") +
                    ": built as separate kernels, not together (both store pairs already)");
    o.pair_stores = true;
    add("epilogue=pairs");
    desc += " O stored in 4-byte column pairs from the accumulator layout, as before the 16-byte stores (d, dv <= 128, no soft-cap or ALiBi);";
  }
  if (!mask.empty()) {
    if (mask != "visible") bad(name, "mask=" + mask + ": must be visible (the shipped wgmma's mask is affine where built)");
    if (!schedule.empty()) bad(name, "mask=visible and schedule=" + schedule + ": built for pingpong only (the other schedules mask so anyway)");
    if (!carry.empty() || !l2ahead.empty() || !epilogue.empty())
      bad(name, std::string("mask=visible and ") + (!carry.empty() ? "carry=on" : !l2ahead.empty() ? "l2ahead=on" : "epilogue=" + epilogue) +
                    ": built as separate kernels, not together");
    o.visible_mask = true;
    add("mask=visible");
    desc += " the consumers' mask from four 64-bit visible_range calls per row block, as before the affine one (d, dv <= 128, no soft-cap or ALiBi);";
  }
  if (!align.empty()) {
    if (align != "sector") bad(name, "align=" + align + ": must be sector (the shipped wgmma's boxes start at dim 0)");
    if (!schedule.empty() || !carry.empty() || !l2ahead.empty() || !epilogue.empty() || !mask.empty() || !classes.empty() ||
        !stages.empty())
      bad(name, "align=sector with another consumer, producer, store, stage or class option: built with the shipped ones only");
    o.align_rows = true;
    add("align=sector");
    desc += " TMA boxes started 8 dims early where a head's rows begin mid-sector, so box rows lie on 32-byte sectors "
            "(tile classes 64/64, 128/128, 160/160, 256/256, no soft-cap or ALiBi);";
  }
  if (!classes.empty()) {
    if (classes != "fine")
      bad(name, "classes=" + classes + ": must be fine (the shipped wgmma runs the tile classes " +
                    detail::wgmma_class_names() + "; fine adds 96/96, 192/192 and 224/224)");
    if (!schedule.empty() || !carry.empty() || !l2ahead.empty() || !epilogue.empty() || !mask.empty())
      bad(name, "classes=fine with another consumer, producer or store option: built with the shipped ones only");
    o.fine_classes = true;
    add("classes=fine");
    desc += " head dims in the tile classes " + detail::wgmma_class_names(true) + " (96/96, 192/192 and 224/224 added);";
  }
  if (!stages.empty()) {
    if (stages != "4" && stages != "5")
      bad(name, "stages=" + stages + ": must be 4 or 5 (the shipped wgmma has 3 K/V stages at the 64/64 class)");
    if (!schedule.empty() || !carry.empty() || !l2ahead.empty() || !epilogue.empty() || !mask.empty() || !classes.empty())
      bad(name, "stages=" + stages + " with another consumer, producer, store, mask or class option: built with the shipped ones only");
    o.stages = stages[0] - '0';
    add("stages=" + stages);
    desc += " " + stages + " K/V stages instead of 3 (d, dv <= 64, no soft-cap or ALiBi, sq + sk < 2^31);";
  }
  if (!grid.empty()) {
    if (grid != "full") bad(name, "grid=" + grid + ": must be full (the shipped wgmma is persistent)");
    if (!blocks.empty()) bad(name, "grid=full and blocks=" + blocks + " both set the grid: give one");
    o.full_grid = true;
    add("grid=full");
    desc += " one block per work item;";
  }
  if (!blocks.empty()) {
    o.max_blocks = count_of(name, "blocks", blocks);
    add("blocks=" + std::to_string(o.max_blocks));
    desc += " a persistent grid of at most " + std::to_string(o.max_blocks) + " block(s);";
  }
  return make_wgmma(canon, desc, o);
}

KernelInfo decode_variant(const std::string& name, std::map<std::string, std::string> opts) {
  detail::DecodeOptions o;
  const std::string splits = take(opts, "splits"), fused = take(opts, "fused"), walk = take(opts, "walk"), plan = take(opts, "plan"),
                    combine = take(opts, "combine"), depth = take(opts, "depth"), mma = take(opts, "mma");
  no_other_options(name, "decode", opts, "splits, plan, fused, walk, combine, depth, mma");
  if (!splits.empty()) o.splits = count_of(name, "splits", splits);
  if (!plan.empty()) {
    if (plan != "half" && plan != "full")
      bad(name, "plan=" + plan + ": must be half or full (the shipped plan: half the resident blocks for one-row blocks, a full wave for several rows)");
    if (o.splits > 0) bad(name, "plan=" + plan + " with splits=" + splits + ": a forced split count leaves no plan to choose");
    (plan == "half" ? o.half_plan : o.full_plan) = true;
  }
  if (!fused.empty()) {
    if (fused != "on") bad(name, "fused=" + fused + ": must be on (the shipped decode combines in a second kernel)");
    o.fused = true;
  }
  if (!walk.empty()) {
    if (!o.fused) bad(name, "walk=" + walk + " needs fused=on (the split kernel runs one split per block)");
    o.walk = count_of(name, "walk", walk);
  }
  if (!combine.empty()) {
    if (combine == "wide") o.combine = detail::DecodeCombine::wide;
    else if (combine == "pdl") o.combine = detail::DecodeCombine::pdl;
    else bad(name, "combine=" + combine + ": must be wide or pdl (the shipped combine loops over the splits)");
    if (o.fused) bad(name, "combine=" + combine + " with fused=on: the fused kernel combines in its last block");
  }
  if (!depth.empty()) {
    if (depth != "3") bad(name, "depth=" + depth + ": must be 3 (the shipped split kernel loads one step ahead: depth 2)");
    if (o.fused) bad(name, "depth=3 with fused=on: the walking kernel has its own loop");
    o.depth = 3;
  }
  if (!mma.empty()) {
    if (mma != "on") bad(name, "mma=" + mma + ": must be on (the shipped decode's split kernel has no tensor-core tile)");
    if (o.fused || o.half_plan || o.full_plan || o.combine != detail::DecodeCombine::loop || o.depth != 2)
      bad(name, "mma=on with fused, plan, combine or depth: the tensor-core split kernel has its own plan and loop, and decode's combine");
    o.mma = true;
  }
  return make_decode_variant(o);
}

}  // namespace

std::string variant_syntax() {
  return std::string("mma/order=rows|heads, mma/rescale=lazy, mma/classes=coarse, mma/small=plain|fma|c32|occ, "
                     "wgmma/schedule=serial|overlap, wgmma/carry=on") +
         (detail::kWgmmaAllSchedules ? "" : " (built with -DFLASHPROBE_WGMMA_SCHEDULES=ON)") +
         ", wgmma/l2ahead=on, wgmma/epilogue=pairs, wgmma/mask=visible, wgmma/align=sector, wgmma/classes=fine, wgmma/stages=4|5, wgmma/grid=full, wgmma/blocks=<n>, decode/splits=<n>, decode/plan=half|full, decode/fused=on, "
         "decode/walk=<n> (with fused=on), decode/combine=wide|pdl, decode/depth=3 (neither with fused=on), decode/mma=on (with splits=<n> only); "
         "one kernel's options combine with ','";
}

std::vector<std::string> variant_names() {
  std::vector<std::string> v = {"mma/order=rows",     "mma/order=heads", "mma/rescale=lazy",
                                "mma/classes=coarse", "mma/small=plain", "mma/small=fma", "mma/small=c32",
                                "mma/small=occ"};
  if (detail::kWgmmaAllSchedules) v.insert(v.end(), {"wgmma/schedule=serial", "wgmma/schedule=overlap", "wgmma/carry=on"});
  v.insert(v.end(), {"wgmma/l2ahead=on", "wgmma/epilogue=pairs", "wgmma/mask=visible", "wgmma/align=sector", "wgmma/classes=fine", "wgmma/stages=4",
                     "wgmma/stages=5", "wgmma/grid=full",
                     "decode/fused=on", "decode/fused=on,walk=1",
                    "decode/plan=half", "decode/plan=full", "decode/combine=wide", "decode/combine=pdl", "decode/plan=half,combine=pdl",
                    "decode/plan=half,combine=pdl,depth=3", "decode/mma=on"});
  return v;
}

KernelInfo find_variant(const std::string& name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string::npos) bad(name, "a variant is <kernel>/<option>=<value>");
  const std::string kernel = name.substr(0, slash);
  if (kernel != "mma" && kernel != "wgmma" && kernel != "decode")
    bad(name, "kernel '" + kernel + "' has no variants (mma, wgmma and decode have)");
  std::map<std::string, std::string> opts = options_of(name, std::string_view(name).substr(slash + 1));
  if (kernel == "mma") return mma_variant(name, std::move(opts));
  if (kernel == "wgmma") return wgmma_variant(name, std::move(opts));
  return decode_variant(name, std::move(opts));
}

KernelInfo kernel_or_variant(const std::string& name) {
  if (const KernelInfo* k = find_kernel(name)) return *k;
  if (name.find('/') == std::string::npos)
    throw UsageError("kernel '" + name + "': no such kernel (this build has: " + kernel_names() +
                     "; variants for benchmarks and tests: " + variant_syntax() + ")");
  return find_variant(name);
}

}  // namespace flashprobe::kernels
