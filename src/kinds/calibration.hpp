#pragma once

// A TLS run's calibration on this host (tls::calibrate_bulk, and for rr and
// crr tls::calibrate_transactions), made once per process for each suite
// and shape and kept: a server's first test of a suite pays for it, its
// later ones do not. None where it cannot be made: a run does not fail for
// want of its split.

#include <cstdint>
#include <optional>
#include <string>

#include "measure/speed.hpp"
#include "protocol/messages.hpp"
#include "spec/spec.hpp"
#include "tls/backend.hpp"
#include "tls/speed.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

// `record_bytes` and `read_bytes` 0: the library's 16 KiB, the chunk.
std::optional<measure::TlsCalibration> calibration_for(const tls::Backend& library, const std::string& suite,
                                                       std::uint32_t chunk_bytes, std::uint32_t record_bytes,
                                                       std::uint32_t read_bytes);

// The suite of a TLS stream whose records this process makes, for its
// calibration; "" for plain TCP and kernel TLS.
std::string user_space_suite(const Stream& stream);

// An rr test's shape: its request and response sizes and its record size.
tls::TransactionShape transaction_shape(const spec::Test& test);

// A crr test's shape: the rr one, and a handshake with a certificate whose
// key `certificate_key_type` describes ("ECDSA P-256"; another: no
// handshake figure), `group`, resumed or full.
tls::TransactionShape connection_shape(const spec::Test& test, const std::string& certificate_key_type,
                                       const std::string& group, bool resumed);

// An rr or crr run's: its sizes, record size and (crr) handshake.
std::optional<measure::TransactionCalibration> transaction_calibration_for(
    const tls::Backend& library, const std::string& suite, const tls::TransactionShape& shape);

// The library a server half's test shakes hands with: the request's, or the default.
inline const tls::Backend& library_of(const protocol::TestRequest& request) {
  return tls::backend_of(tls::find_backend(request.tls_library));
}

}  // namespace tlscmp::kinds
