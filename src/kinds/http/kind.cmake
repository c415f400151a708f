# What the http kind links: Debian's HTTP/2 library (libnghttp2-dev) and
# HTTP/1.1 parser (libhttp-parser-dev), found here so that the kind's folder
# names its own dependencies (src/CMakeLists.txt includes kinds/*/kind.cmake).
pkg_check_modules(NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2>=1.52)
find_path(HTTP_PARSER_INCLUDE_DIR http_parser.h REQUIRED)
find_library(HTTP_PARSER_LIBRARY http_parser REQUIRED)
target_include_directories(tlscmp_usage SYSTEM INTERFACE ${HTTP_PARSER_INCLUDE_DIR})
target_link_libraries(tlscmp_usage INTERFACE PkgConfig::NGHTTP2 ${HTTP_PARSER_LIBRARY})
# connection.cpp reads TCP_INFO's byte counts from <linux/tcp.h>, which
# cannot sit beside <netinet/tcp.h> in one unity batch.
set_source_files_properties(kinds/http/connection.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
