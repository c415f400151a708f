#pragma once

// `tlscmp speed`: this host's TLS library in memory (tls/speed.hpp), with
// the settings a run would use, figure after figure.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "measure/speed.hpp"
#include "tls/identity.hpp"

namespace tlscmp::tls {
class Backend;
}

namespace tlscmp::app {

// What to measure; each list empty means all this build has.
struct SpeedConfig {
  std::vector<const tls::Backend*> libraries;  // --tls-lib, measured one after another

  std::vector<std::string> suites;                      // suite names (tls::speed_suites())
  std::vector<std::uint32_t> sizes{1024, 4096, 16384};  // AEAD record payloads
  std::vector<tls::KeyType> key_types;                  // handshakes per key type, with the default group
  std::vector<std::string> groups;                      // handshakes per group, with the first key type
  std::uint32_t chunk_bytes = 64 * 1024;                // bulk: bytes per write (-l)
  std::uint32_t record_bytes = 0;                       // bulk: --record-size; 0: the library's 16 KiB
  std::uint32_t sessions = 200;                         // memory: idle connections held at once
  double seconds = 0.5;                                 // per figure
  bool aead = true, bulk = true, handshakes = true, memory = true;  // --parts
};

// Called before each figure: what it is, and how many of how many.
using SpeedProgress = std::function<void(const std::string& figure, int number, int figures)>;

// Runs every figure `config` asks for, for each of its libraries (none: the
// default), in order; what a library cannot measure (a suite BoringSSL does
// not let a client choose) is a note. Throws tlscmp::Error.
std::vector<measure::SpeedResults> run_speed(const SpeedConfig& config, const SpeedProgress& progress);

}  // namespace tlscmp::app
