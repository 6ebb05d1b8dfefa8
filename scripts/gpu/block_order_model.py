#!/usr/bin/env python3
"""A list-scheduling model of the mma kernel's causal block order (kernels/src/mma/mma_order.h).

Blocks are handed out in dispatch order (x fastest) to the first free block slot; row block m of a
causal Sq = Sk problem costs 2 (m + 1) key tiles of 64 plus one tile-time of fixed cost. Prints,
for the causal prefill grid of `flashprobe bench` (B = 16384 / S, H = 2048 / D), the model's time
over the ideal (total work / slots) for v8's order (rows innermost) and v9's (a batch's heads
innermost), and for groups of G heads. The H100 has 132 SMs with two mma blocks each: 264 slots.

    scripts/gpu/block_order_model.py [--slots 264]
"""
import argparse
import heapq


def makespan(order, slots):
    free = [0.0] * slots
    end = 0.0
    for cost in order:
        t = heapq.heappop(free) + cost
        end = max(end, t)
        heapq.heappush(free, t)
    return end


def cost(m):
    return 2 * (m + 1) + 1.0


def grouped(heads, nm, group):
    """Heads in groups of `group`; in a group row blocks heaviest first, the group's heads innermost."""
    order = []
    for g0 in range(0, heads, group):
        size = min(group, heads - g0)
        order += [cost(nm - 1 - y) for y in range(nm) for _ in range(size)]
    return order


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slots", type=int, default=264)
    a = ap.parse_args()
    if a.slots < 1:
        ap.error(f"--slots={a.slots}: must be at least 1")
    print(f"{'d':>4} {'S':>6} {'heads':>6} {'rows (v8)':>10} {'heads (v9)':>11}  groups of G heads")
    for d in (64, 128):
        hq = 2048 // d
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            batch, nm = 16384 // s, s // 128
            heads = hq * batch
            ideal = sum(cost(m) for m in range(nm)) * heads / a.slots
            rows = makespan(grouped(heads, nm, 1), a.slots) / ideal
            v9 = makespan(grouped(heads, nm, hq), a.slots) / ideal
            g = "  ".join(f"G{G}: {makespan(grouped(heads, nm, G), a.slots) / ideal:.3f}" for G in (4, 8, 32, heads))
            print(f"{d:>4} {s:>6} {heads:>6} {rows:>10.3f} {v9:>11.3f}  {g}")


if __name__ == "__main__":
    main()
