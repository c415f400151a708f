#pragma once

#include <cstdint>
#include <string>

namespace tlscmp::measure {

// "1 GiB", "64 KiB", "1.5 MiB", "100 B": binary units, as the size flags take them.
std::string format_bytes(std::uint64_t bytes);

}  // namespace tlscmp::measure
