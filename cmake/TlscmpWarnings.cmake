# An INTERFACE target carrying the project's warning flags; every tlscmp target links it.
add_library(tlscmp_warnings INTERFACE)
target_compile_options(tlscmp_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wconversion -Wsign-conversion
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(TLSCMP_WARNINGS_AS_ERRORS)
  target_compile_options(tlscmp_warnings INTERFACE -Werror)
endif()
