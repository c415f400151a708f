# Every dependency comes from a Debian 12 or 13 package (scripts/install-deps installs them).
# Why each is here is written in README.md, "Dependencies".
find_package(Threads REQUIRED)
# TLS: OpenSSL (libssl-dev) by default, or BoringSSL. Either way the target
# tlscmp_tls_ssl stands for it, and src/tls/ssl_compat.hpp is the only source
# file that knows which one it is. With TLSCMP_BORINGSSL_BINARY (an OpenSSL
# build), tlscmp_tls_boringssl stands for BoringSSL too: the same build tree
# then also links tlscmp-boringssl, whose objects are this build's but for
# src/tls/ (the cross-library tests' peer, built once instead of a second tree).
set(TLSCMP_TLS_BACKEND "OpenSSL" CACHE STRING "TLS library: OpenSSL or BoringSSL")
set_property(CACHE TLSCMP_TLS_BACKEND PROPERTY STRINGS OpenSSL BoringSSL)
option(TLSCMP_BORINGSSL_BINARY "Also build tlscmp-boringssl (not installed), for the cross-library tests" OFF)

# An INTERFACE target `name` for BoringSSL: Debian's android-libboringssl-dev
# (headers in /usr/include/android, the shared libraries in
# <libdir>/android), or BORINGSSL_ROOT (a tree with include/ and lib/).
# Sets tlscmp_boringssl_rpath: the libraries are not on the loader's path.
function(tlscmp_boringssl_target name)
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
  add_library(${name} INTERFACE)
  target_include_directories(${name} SYSTEM BEFORE INTERFACE "${BORINGSSL_INCLUDE_DIR}")
  target_link_libraries(${name} INTERFACE "${BORINGSSL_SSL}" "${BORINGSSL_CRYPTO}")
  # Which Debian package it came from, for --version (BoringSSL has no version of its own).
  execute_process(COMMAND dpkg-query -W "-f=\${Version}" android-libboringssl-dev
                  OUTPUT_VARIABLE boringssl_package RESULT_VARIABLE dpkg_failed ERROR_QUIET)
  if(NOT BORINGSSL_ROOT AND NOT dpkg_failed AND boringssl_package)
    target_compile_definitions(${name} INTERFACE
      TLSCMP_BORINGSSL_PACKAGE="Debian's android-libboringssl ${boringssl_package}")
  endif()
  get_filename_component(rpath "${BORINGSSL_SSL}" DIRECTORY)
  set(tlscmp_boringssl_rpath "${rpath}" PARENT_SCOPE)
endfunction()

if(TLSCMP_TLS_BACKEND STREQUAL "OpenSSL")
  find_package(OpenSSL 3.0 REQUIRED)
  add_library(tlscmp_tls_ssl INTERFACE)
  target_link_libraries(tlscmp_tls_ssl INTERFACE OpenSSL::SSL OpenSSL::Crypto)
  if(TLSCMP_BORINGSSL_BINARY)
    tlscmp_boringssl_target(tlscmp_tls_boringssl)
  endif()
elseif(TLSCMP_TLS_BACKEND STREQUAL "BoringSSL")
  if(TLSCMP_BORINGSSL_BINARY)
    message(FATAL_ERROR "TLSCMP_BORINGSSL_BINARY builds a BoringSSL tlscmp beside an OpenSSL one; "
                        "this build's tlscmp is BoringSSL already: leave it OFF")
  endif()
  tlscmp_boringssl_target(tlscmp_tls_ssl)
  set(CMAKE_BUILD_RPATH "${tlscmp_boringssl_rpath}")
  set(CMAKE_INSTALL_RPATH "${tlscmp_boringssl_rpath}")
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
