# Read by ctest after the discovered tests (TEST_INCLUDE_FILES, with the
# e2e tests): the tests that count the server's threads run alone, since
# under ctest -j other tests' load keeps threads busy past their time and
# the counts over their bounds. So do the tests whose every part must get a
# turn within a short run (every one of 50 flows moving bytes in 0.5 s, or
# of 200 flows their share, under the sanitizers: a flow of -R has been seen
# to get nothing under load, which is under study) or whose server must
# notice a vanished client while CPU-bound tests run beside it; and the
# most CPU-bound of those (tlscmp speed over every suite).
# ctest runs the others around them.
set_tests_properties(
  "e2e/a flood from many addresses: busy lines, no resets, a bounded number of threads given back"
  "e2e/bulk flows -t with the server sending: every flow moved bytes and the fairness index is above 0 and at most 1"
  "e2e/bulk flows -n: exactly those bytes over 200 flows on 2 threads each way in tcp and tls and tls-release"
  "e2e/tlscmp speed -J: every suite and size sealed and opened, bulk per suite, handshakes, memory"
  "e2e/hostile and broken peers: the server survives, serves the next client, and frees what they held"
  PROPERTIES RUN_SERIAL TRUE)
