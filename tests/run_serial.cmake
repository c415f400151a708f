# Read by ctest after the discovered tests (TEST_INCLUDE_FILES, with the
# e2e tests): the tests that count the server's threads run alone, since
# under ctest -j other tests' load keeps threads busy past their time and
# the counts over their bounds. ctest runs the others around them.
set_tests_properties(
  "e2e/a flood from many addresses: busy lines, no resets, a bounded number of threads given back"
  PROPERTIES RUN_SERIAL TRUE)
