# Every dependency comes from a Debian 12 or 13 package (scripts/install-deps installs them).
# Why each is here is written in README.md, "Dependencies".
find_package(Threads REQUIRED)
# TLS: OpenSSL (libssl-dev) by default, or BoringSSL. Either way the targets
# tlscmp_tls_ssl and tlscmp_tls_crypto stand for it, and src/tls/ssl_compat.hpp
# is the only source file that knows which one it is.
set(TLSCMP_TLS_BACKEND "OpenSSL" CACHE STRING "TLS library: OpenSSL or BoringSSL")
set_property(CACHE TLSCMP_TLS_BACKEND PROPERTY STRINGS OpenSSL BoringSSL)
if(TLSCMP_TLS_BACKEND STREQUAL "OpenSSL")
  find_package(OpenSSL 3.0 REQUIRED)
  add_library(tlscmp_tls_ssl INTERFACE)
  target_link_libraries(tlscmp_tls_ssl INTERFACE OpenSSL::SSL OpenSSL::Crypto)
elseif(TLSCMP_TLS_BACKEND STREQUAL "BoringSSL")
  # Debian's android-libboringssl-dev: headers in /usr/include/android, the
  # shared libraries in <libdir>/android. BORINGSSL_ROOT points elsewhere
  # (a tree with include/ and lib/).
  if(BORINGSSL_ROOT)
    set(boringssl_include "${BORINGSSL_ROOT}/include")
    set(boringssl_libdir "${BORINGSSL_ROOT}/lib")
  else()
    set(boringssl_include "/usr/include/android")
    set(boringssl_libdir "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/android")
  endif()
  find_path(BORINGSSL_INCLUDE_DIR openssl/is_boringssl.h PATHS "${boringssl_include}" NO_DEFAULT_PATH REQUIRED)
  find_library(BORINGSSL_SSL ssl PATHS "${boringssl_libdir}" NO_DEFAULT_PATH REQUIRED)
  find_library(BORINGSSL_CRYPTO crypto PATHS "${boringssl_libdir}" NO_DEFAULT_PATH REQUIRED)
  add_library(tlscmp_tls_ssl INTERFACE)
  target_include_directories(tlscmp_tls_ssl SYSTEM BEFORE INTERFACE "${BORINGSSL_INCLUDE_DIR}")
  target_link_libraries(tlscmp_tls_ssl INTERFACE "${BORINGSSL_SSL}" "${BORINGSSL_CRYPTO}")
  # Which Debian package it came from, for --version (BoringSSL has no version of its own).
  execute_process(COMMAND dpkg-query -W "-f=\${Version}" android-libboringssl-dev
                  OUTPUT_VARIABLE boringssl_package RESULT_VARIABLE dpkg_failed ERROR_QUIET)
  if(NOT BORINGSSL_ROOT AND NOT dpkg_failed AND boringssl_package)
    target_compile_definitions(tlscmp_tls_ssl INTERFACE
      TLSCMP_BORINGSSL_PACKAGE="Debian's android-libboringssl ${boringssl_package}")
  endif()
  # The libraries are not on the loader's path: remember where they are.
  get_filename_component(boringssl_rpath "${BORINGSSL_SSL}" DIRECTORY)
  set(CMAKE_BUILD_RPATH "${boringssl_rpath}")
  set(CMAKE_INSTALL_RPATH "${boringssl_rpath}")
else()
  message(FATAL_ERROR "TLSCMP_TLS_BACKEND must be OpenSSL or BoringSSL, not '${TLSCMP_TLS_BACKEND}'")
endif()
# The oldest versions each library is built and tested with; a missing or
# older one stops the configuration with one message naming the package.
# (find_package's own message lists config file names, not what to install.)
# A macro, not a function: the packages' variables (doctest's module path) must
# reach the caller.
macro(tlscmp_require package minimum debian_package why)
  find_package(${package} CONFIG QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "tlscmp needs ${package} ${minimum} or newer (${why}) and found none: "
                        "install ${debian_package}, or run scripts/install-deps")
  endif()
  if(${package}_VERSION VERSION_LESS ${minimum})
    message(FATAL_ERROR "tlscmp needs ${package} ${minimum} or newer (${why}); found ${${package}_VERSION} "
                        "in ${${package}_DIR}: see docs/development.md, \"Other releases\"")
  endif()
  message(STATUS "${package} ${${package}_VERSION}: ${why}")
endmacro()
# Boost: Asio only, header-only. 1.74 is Debian 12's and Ubuntu 22.04's
# libboost-dev; Debian 13 has 1.83 (and 1.88).
tlscmp_require(Boost 1.74 "libboost-dev" "Boost.Asio")
tlscmp_require(CLI11 2.1 "libcli11-dev" "command line parsing")
tlscmp_require(nlohmann_json 3.11 "nlohmann-json3-dev" "control messages and -J output")
tlscmp_require(fmt 9 "libfmt-dev" "text formatting")
if(TLSCMP_BUILD_TESTS)
  tlscmp_require(doctest 2.4 "doctest-dev" "unit and end-to-end tests")
endif()
