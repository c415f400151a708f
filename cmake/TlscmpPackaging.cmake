# A Debian package of what `cmake --install` installs (scripts/package runs it):
# /usr/bin/tlscmp, tlscmp(1), the bash completion, the README in
# /usr/share/doc/tlscmp and tlscmp-server.service, installed disabled (no
# maintainer scripts enable it). Depends comes from dpkg-shlibdeps, for the
# release the package is built on.
set(TLSCMP_PACKAGE_RELEASE "1" CACHE STRING
    "Debian revision of the package, e.g. 1~debian13 (scripts/package names the release)")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tlscmp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "measures what TLS costs over plain TCP")
set(CPACK_PACKAGE_DESCRIPTION
    "tlscmp runs the same workload over plain TCP and over TLS between a client\n"
    "and a server host, times only what comes after the handshake (and the\n"
    "handshake on its own), and prints bytes, microseconds and the ratio side by\n"
    "side: bulk streams, message framing, parallel streams, UDP and DTLS,\n"
    "handshakes per key exchange group, with CPU cost on both ends.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tlscmp_VERSION-RELEASE_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${TLSCMP_PACKAGE_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "tlscmp developers <tlscmp@example.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, iperf3")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_SOURCE_DIR}/dist)
include(CPack)
