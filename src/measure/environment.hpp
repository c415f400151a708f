#pragma once

#include <string>

namespace tlscmp::measure {

// "AMD EPYC", from /proc/cpuinfo's first "model name"; "unknown" if none.
std::string cpu_model();

// "Linux 6.1.0-18-amd64 x86_64", from uname(2).
std::string kernel_description();

}  // namespace tlscmp::measure
