# Every dependency comes from a Debian 12 package (scripts/install-deps installs them).
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
  # The libraries are not on the loader's path: remember where they are.
  get_filename_component(boringssl_rpath "${BORINGSSL_SSL}" DIRECTORY)
  set(CMAKE_BUILD_RPATH "${boringssl_rpath}")
  set(CMAKE_INSTALL_RPATH "${boringssl_rpath}")
else()
  message(FATAL_ERROR "TLSCMP_TLS_BACKEND must be OpenSSL or BoringSSL, not '${TLSCMP_TLS_BACKEND}'")
endif()
find_package(Boost 1.81 CONFIG REQUIRED)     # libboost1.81-dev: Asio (header-only)
find_package(CLI11 2.1 CONFIG REQUIRED)      # libcli11-dev: command line parsing
find_package(nlohmann_json 3.11 CONFIG REQUIRED) # nlohmann-json3-dev: control messages and -J output
find_package(fmt 9 CONFIG REQUIRED)          # libfmt-dev: text formatting
if(TLSCMP_BUILD_TESTS)
  find_package(doctest 2.4 CONFIG REQUIRED)  # doctest-dev: unit and end-to-end tests
endif()
