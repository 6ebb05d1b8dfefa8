#pragma once
// What this binary is: version, the commit it was built from and its GPU backend. Every record
// written by flashprobe carries these so that a result names the code that produced it.
namespace flashprobe {
const char* version();
const char* commit();   // short git hash at configure time, or "unknown"
const char* backend();  // "cuda", "hip" or "off"
}  // namespace flashprobe
