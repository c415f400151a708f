#pragma once

// Certificates that `tlscmp certs` will not make, for tests of what clients
// and servers say about them.

#include <filesystem>

namespace tlscmp::test {

// Rewrites DIR/server.pem, made by `tlscmp certs --dir DIR` (which keeps the
// CA's key in DIR/ca.key), with the same key, names (localhost, 127.0.0.1,
// ::1) and CA, valid from now + not_before_s to now + not_after_s: expired
// when both are negative, not valid yet when both are positive.
void reissue_server_certificate(const std::filesystem::path& dir, long not_before_s, long not_after_s);

}  // namespace tlscmp::test
