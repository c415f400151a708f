#pragma once

// This host's TLS library measured in memory, with the settings a run would
// use: the AEAD of each suite, bulk TLS over a memory pair, handshakes, and
// the memory an idle connection holds. `tlscmp speed` shows them; a bulk run
// splits TLS's extra CPU with them.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/speed.hpp"
#include "tls/context.hpp"

namespace tlscmp::tls {

class Backend;

// A suite tlscmp offers, and the AEAD its records are sealed with.
struct SpeedSuite {
  std::string name;     // "TLS_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"
  std::string version;  // "1.3" or "1.2"
  std::string aead;     // "AES-128-GCM", "AES-256-GCM", "ChaCha20-Poly1305"
};

// The TLS 1.3 suites, then the TLS 1.2 AES-GCM and ChaCha20-Poly1305 ones
// for certificates of `key_type` (ECDHE-ECDSA-..., or ECDHE-RSA-...).
std::vector<SpeedSuite> speed_suites(KeyType key_type = KeyType::ecdsa_p256);
// Both key types' suites, each once: the TLS 1.3 ones, then ECDSA's and
// RSA's TLS 1.2 ones.
std::vector<SpeedSuite> all_speed_suites();
// A suite by its name, either key type's; none where it is not one of them.
std::optional<SpeedSuite> find_speed_suite(const std::string& name);

// What a memory bulk measurement moves: `chunk_bytes` per write, records of
// `record_bytes` (0: the library's 16 KiB), reads of `read_bytes` (0: the chunk).
struct MemoryBulkShape {
  std::size_t chunk_bytes = 64 * 1024;
  std::size_t record_bytes = 0;
  std::size_t read_bytes = 0;
};

// A client and a server context for in-memory measures of `suite`, over a
// certificate made for them (ECDSA P-256, or RSA 2048 for an ECDHE-RSA
// suite), the client offering that suite alone. Where the library lets no
// client choose its TLS 1.3 suite (BoringSSL), the client offers TLS 1.3
// alone and `refused` says why: the caller checks what was negotiated.
struct SuiteContexts {
  Context client;
  Context server;
  std::string refused;
};
// With `key_type`, the certificate is of that type; with `group`, the
// client offers that key exchange group alone (one the library does not
// know: its defaults). Certificates are made once per process and type.
SuiteContexts contexts_for_suite(const Backend& backend, const SpeedSuite& suite,
                                 std::optional<KeyType> key_type = std::nullopt,
                                 const std::string& group = {});
// A certificate set of `key_type` this process made anyway (a server's
// certificate for --compare-key-types), kept for the contexts above where
// none of that type is kept yet: a key of RSA 3072 bits or more takes a
// second or more to make, and a server's calibration after a test is not to
// make it again while the client waits for its figures.
void keep_certificates(KeyType key_type, const CertificateSet& set);
// The certificate set of `key_type` kept (by keep_certificates, or made
// before), else one `maker` makes now and keeps: once per process, for
// every backend (certificates are PEM, whichever library made them). Never
// erased, so that the reference holds.
const CertificateSet& kept_certificates(KeyType key_type, const Backend& maker);

// One AEAD keyed as a backend's record layer keys it, sealing or opening
// one record at a time as its record layer does: what each backend's AEAD
// figure times (Backend::measure_aead, through aead_figure below).
class RecordSealer {
 public:
  static constexpr std::size_t kTagBytes = 16;
  virtual ~RecordSealer() = default;
  // Seals `plain` into `sealed` (the ciphertext, then the tag), or opens
  // `sealed` back into `plain`, as record `sequence` (its number in the
  // nonce) with additional data `aad`. Throws tlscmp::Error.
  virtual void apply(bool seal, std::uint64_t sequence, const std::vector<std::uint8_t>& aad,
                     std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& sealed) = 0;
};
// `suite`'s AEAD figure at `payload_bytes` a record, about `seconds` each
// way: records sealed one after another, numbered from 0, by one sealer;
// then record 0, sealed by a fresh one, opened again and again by a third.
// `make(seal)` makes each (a new key schedule, as a connection has).
measure::AeadFigure aead_figure(const SpeedSuite& suite, std::size_t payload_bytes, double seconds,
                                const std::function<std::unique_ptr<RecordSealer>(bool seal)>& make);

// The additional data a record layer seals a record of `sealed` bytes with:
// TLS 1.3's record header, or TLS 1.2's sequence number (1), header and
// plaintext length; what each backend's AEAD figure seals with.
std::vector<std::uint8_t> record_aad(bool tls13, std::size_t sealed, std::size_t plain);

// What a bulk run's side calibrates with on this host: the AEAD of `suite`
// at `shape.record_bytes`, and TLS in memory with the run's shape, about
// `seconds` each, the best of five tries. None where the suite is not one tlscmp speed knows, or
// the library will not negotiate it in memory.
std::optional<measure::TlsCalibration> calibrate_bulk(const Backend& backend, const std::string& suite,
                                                      const MemoryBulkShape& shape, double seconds);

// What an rr or crr run's side calibrates with: its transactions' sizes,
// its records' largest plaintext (0: 16 KiB), and for crr a handshake with
// a server certificate of `key_type`, the key exchange `group` ("": the
// default) and resumed or full.
struct TransactionShape {
  std::uint64_t request_bytes = 1;
  std::uint64_t response_bytes = 1;
  std::size_t record_bytes = 0;
  std::optional<KeyType> key_type;  // none: no handshake figure (rr)
  std::string group;
  bool resumed = false;
};

// One side's calibration of an rr or crr run on this host (measure::
// TransactionCalibration), about `seconds` each figure, the best of five
// tries (fewer where slow handshakes take the time of five). Messages over
// 1 MiB are timed in memory at 1 MiB and scaled by their size. None where the suite is not one tlscmp speed
// knows, or the library will not negotiate it in memory.
std::optional<measure::TransactionCalibration> calibrate_transactions(const Backend& backend,
                                                                      const std::string& suite,
                                                                      const TransactionShape& shape,
                                                                      double seconds);

// Seals records of `payload_bytes` for about `seconds`, then opens one as
// often for as long, as the record layer does (its nonces and additional
// data). Throws tlscmp::Error where the library has not the AEAD.
measure::AeadFigure measure_aead(const SpeedSuite& suite, std::size_t payload_bytes, double seconds);

// A client of `client` writing to a server of `server` through memory for
// about `seconds`, after one handshake. Throws tlscmp::Error.
measure::MemoryBulkFigure measure_memory_bulk(const Context& client, const Context& server,
                                              const MemoryBulkShape& shape, double seconds);

// Full (or, with `resumed`, resumed) handshakes one after another for about
// `seconds`; `key_type` is the server certificate's, for the figure.
// Throws tlscmp::Error, and where a handshake that was to resume did not.
measure::HandshakeFigure measure_handshakes(const Context& client, const Context& server, KeyType key_type,
                                            bool resumed, double seconds);

// The heap that `sessions` established, idle connections hold on each side,
// with the library's own buffers (as a server of many connections runs),
// and with `release`, idle buffers handed back.
measure::SessionMemoryFigure measure_session_memory(const Context& client, const Context& server,
                                                    bool release, std::uint32_t sessions);

}  // namespace tlscmp::tls
