# Every dependency comes from a Debian 12 package (scripts/install-deps installs them).
# Why each is here is written in README.md, "Dependencies".
find_package(Threads REQUIRED)
find_package(OpenSSL 3.0 REQUIRED)           # libssl-dev: TLS and certificates
find_package(Boost 1.81 CONFIG REQUIRED)     # libboost1.81-dev: Asio (header-only)
find_package(CLI11 2.1 CONFIG REQUIRED)      # libcli11-dev: command line parsing
find_package(nlohmann_json 3.11 CONFIG REQUIRED) # nlohmann-json3-dev: control messages and -J output
find_package(fmt 9 CONFIG REQUIRED)          # libfmt-dev: text formatting
if(TLSCMP_BUILD_TESTS)
  find_package(doctest 2.4 CONFIG REQUIRED)  # doctest-dev: unit and end-to-end tests
endif()
