# The http kind links nothing beyond the core's: HTTP's framing
# (framing/http*.cpp, nghttp2 and http-parser) is below the kinds.
# connection.cpp reads TCP_INFO's byte counts from <linux/tcp.h>, which
# cannot sit beside <netinet/tcp.h> in one unity batch.
set_source_files_properties(kinds/http/connection.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
