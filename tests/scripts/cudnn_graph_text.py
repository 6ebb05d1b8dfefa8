#!/usr/bin/env python3
"""The operation graphs of a stand-in cuDNN log (tests/plugin/fake_cudnn.cpp, FAKE_CUDNN_LOG) as text:
each graph's operations in order, every attribute set on them with cuDNN's names (from cudnn_graph.h),
the descriptors they refer to expanded and tensors as (type, dims, strides, virtual, by value, the
rest of their attributes), tensor ids renumbered by first appearance. Two programs that set the same
descriptors give the same text, whatever ids and order of creation they use.

    cudnn_graph_text.py <cudnn_graph.h> <log>"""
import re
import sys


def enum(header, name):
    """{value: name} of the C enum `name` in the header."""
    m = re.search(r"typedef enum\s*\{([^{}]*)\}\s*" + name + ";", header)
    if not m:
        raise SystemExit(f"cudnn_graph_text.py: enum {name} not in the header")
    body = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S))
    out, val = {}, -1
    for item in body.split(","):
        mm = re.match(r"\s*(\w+)\s*(?:=\s*(.+?))?\s*$", item, re.S)
        if not mm:
            continue
        if mm.group(2) is not None:
            try:
                val = int(mm.group(2), 0)
            except ValueError:
                continue
        else:
            val += 1
        out.setdefault(val, mm.group(1))
    return out


def graph_text(header, log_lines):
    types = enum(header, "cudnnBackendDescriptorType_t")
    attrs = enum(header, "cudnnBackendAttributeName_t")
    value_names = {"MODE": enum(header, "cudnnPointwiseMode_t"), "TYPE": enum(header, "cudnnDataType_t"),
                   "PREC": enum(header, "cudnnDataType_t"), "OPERATOR": enum(header, "cudnnReduceTensorOp_t")}
    desc = {}
    for line in log_lines:
        w = line.split()
        if not w:
            continue
        if w[0] == "create":
            desc[int(w[1])] = {"type": types.get(int(w[3]), w[3]), "attrs": {}}
        elif w[0] == "set":
            desc[int(w[1])]["attrs"][attrs.get(int(w[3]), w[3])] = line.split(":", 1)[1].split()
    ids = {}

    def value(attr, v):
        for key, names in value_names.items():
            if attr.endswith(key) and v.lstrip("-").isdigit():
                return names.get(int(v), v).replace("CUDNN_", "")
        return v

    def tensor(a):
        uid = a["CUDNN_ATTR_TENSOR_UNIQUE_ID"][0]
        virtual = a.get("CUDNN_ATTR_TENSOR_IS_VIRTUAL", ["0"])[0] == "1"
        name = ids.setdefault(uid, ("v" if virtual else "t") + str(len(ids)))
        rest = sorted((k.replace("CUDNN_ATTR_TENSOR_", ""), " ".join(v)) for k, v in a.items()
                      if k not in ("CUDNN_ATTR_TENSOR_UNIQUE_ID", "CUDNN_ATTR_TENSOR_IS_VIRTUAL", "CUDNN_ATTR_TENSOR_DATA_TYPE",
                                   "CUDNN_ATTR_TENSOR_DIMENSIONS", "CUDNN_ATTR_TENSOR_STRIDES"))
        return "%s %s dims %s strides %s%s%s" % (
            name, value("TYPE", a["CUDNN_ATTR_TENSOR_DATA_TYPE"][0]), ",".join(a["CUDNN_ATTR_TENSOR_DIMENSIONS"]),
            ",".join(a["CUDNN_ATTR_TENSOR_STRIDES"]), " virtual" if virtual else "", "".join(" %s=%s" % kv for kv in rest))

    def describe(i, indent):
        d = desc[i]
        if d["type"] == "CUDNN_BACKEND_TENSOR_DESCRIPTOR":
            return [tensor(d["attrs"])]
        lines = [d["type"].replace("CUDNN_BACKEND_", "")]
        for k in sorted(d["attrs"]):
            v = d["attrs"][k]
            name = k.replace("CUDNN_ATTR_", "")
            if v and all(x.startswith("d") for x in v):
                sub = [describe(int(x[1:]), indent + 1) for x in v]
                if len(sub) == 1 and len(sub[0]) == 1:
                    lines.append("  " * indent + "%s: %s" % (name, sub[0][0]))
                else:
                    lines.append("  " * indent + name + ":")
                    for s in sub:
                        lines.append("  " * (indent + 1) + s[0])
                        lines.extend(s[1:])
            elif v != ["ptr"]:
                lines.append("  " * indent + "%s: %s" % (name, " ".join(value(name, x) for x in v)))
        return lines

    out = []
    for i, d in desc.items():
        if d["type"] == "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR" and "CUDNN_ATTR_OPERATIONGRAPH_OPS" in d["attrs"]:
            ids.clear()
            out.append("graph")
            for op in d["attrs"]["CUDNN_ATTR_OPERATIONGRAPH_OPS"]:
                lines = describe(int(op[1:]), 2)
                out.append("  " + lines[0])
                out.extend(lines[1:])
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: cudnn_graph_text.py <cudnn_graph.h> <log>")
    with open(sys.argv[1]) as h, open(sys.argv[2]) as log:
        sys.stdout.write(graph_text(h.read(), log))
