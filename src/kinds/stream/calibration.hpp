#pragma once

// A bulk TLS run's calibration on this host (tls::calibrate_bulk), made once
// per process for each suite and shape and kept: a server's first test of a
// suite pays for it, its later ones do not.

#include <cstdint>
#include <optional>
#include <string>

#include "measure/speed.hpp"

namespace tlscmp::kinds {

// `record_bytes` and `read_bytes` 0: the library's 16 KiB, the chunk.
std::optional<measure::TlsCalibration> calibration_for(const std::string& suite, std::uint32_t chunk_bytes,
                                                       std::uint32_t record_bytes, std::uint32_t read_bytes);

}  // namespace tlscmp::kinds
