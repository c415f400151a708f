#pragma once

// The variants of a round that kinds share, and their trial handshakes.

#include <string>
#include <vector>

#include "measure/results.hpp"
#include "session/client_side.hpp"
#include "session/config.hpp"
#include "tls/context.hpp"

namespace tlscmp::kinds {

struct KindSlice;

// The variant of one mode that is no TLS variant (tcp, udp, dtls), or the
// plain tls one.
session::Variant mode_variant(Mode mode, const tls::ClientOptions& tls_config);

// What one round runs: tcp, and tls once or, with --compare-ciphers, once
// per suite (a suite this library cannot run is a note); udp and dtls.
std::vector<session::Variant> common_variants(const session::ClientConfig& config,
                                              const tls::ClientOptions& tls_config,
                                              std::vector<std::string>& notes);

// --tls-lib's libraries as client options, the first first: each with its
// backend and the library the server is asked for (its own, or
// --server-tls-lib's). Without --tls-lib: `tls_config` alone, unchanged.
std::vector<tls::ClientOptions> library_options(const session::ClientConfig& config,
                                                const tls::ClientOptions& tls_config);

// What one round runs with --tls-lib's libraries: the kind's variants
// (`kind.variants`, or common_variants) with the first library, then the
// TLS-over-TCP ones again with each other library, labelled with its name
// ("tls boringssl"), all asking the server for their own library (or
// --server-tls-lib's). Without --tls-lib: the kind's variants, the server's
// default library unnamed.
std::vector<session::Variant> library_variants(const KindSlice& kind, const session::ClientConfig& config,
                                               const tls::ClientOptions& tls_config,
                                               std::vector<std::string>& notes);

// One TLS handshake per TLS variant before the first measured run (not
// timed, not counted), so that a TLS setting that cannot work fails in
// seconds rather than after a whole TCP run. An optional variant whose
// handshake fails is left out with a note. Sets the comparison's variants
// to those left; false (the error in the comparison) when it ends here.
bool try_tls_variants(const session::ClientConfig& target, std::vector<session::Variant>& variants,
                      session::InterruptWatch& interrupt, measure::Comparison& comparison);

}  // namespace tlscmp::kinds
