# Read by ctest after the discovered tests (TEST_INCLUDE_FILES, with the
# e2e tests), to schedule them under ctest -j.
#
# The tests that count the server's threads run alone, since
# under ctest -j other tests' load keeps threads busy past their time and
# the counts over their bounds. So do the tests whose every part must get a
# turn within a short run (every one of 50 flows moving bytes in 0.5 s, or
# of 200 flows their share, under the sanitizers: a flow of -R has been seen
# to get nothing under load, which is under study) or whose server must
# notice a vanished client while CPU-bound tests run beside it (the
# hostile-peers test: beside the others its server once took over 20 s to
# notice a killed crr client, which is under study); and the most
# CPU-bound of those (tlscmp speed over every suite). ctest runs the
# others around them.
set_tests_properties(
  "e2e/a flood from many addresses: busy lines, no resets, a bounded number of threads given back"
  "e2e/bulk flows -t with the server sending: every flow moved bytes and the fairness index is above 0 and at most 1"
  "e2e/bulk flows -n: exactly those bytes over 200 flows on 2 threads each way in tcp and tls and tls-release"
  "e2e/tlscmp speed -J: every suite and size sealed and opened, bulk per suite, handshakes, memory"
  "e2e/hostile and broken peers: the server survives, serves the next client, and frees what they held"
  PROPERTIES RUN_SERIAL TRUE)

# The slowest of the others (15 to 40 s each, mostly waiting on timers and
# a browser) start first, beside the short ones, rather than last: a clean
# clone has no timings of earlier runs for ctest to order them by.
set_tests_properties(
  "e2e/--html pages from real runs of every kind: the headline from the JSON, a chart per figure"
  "e2e/--compare-key-types against a server with its own certificate: signed by --issuer, or refused"
  "e2e/the server keeps serving after garbage, plaintext, absurd parameters and vanished clients"
  "e2e/a link that goes silent mid-transfer: both sides say so at the idle timeout, not the default 30 s"
  "e2e/a TLS crr run splits each side's extra CPU per connection: the handshake in memory first"
  "e2e/--html after Ctrl-C: the page of what finished, marked partial, and key exchange groups drawn"
  "e2e/a server offers what a hardened one does: TLS 1.3, and TLS 1.2 with ECDHE and AEAD alone, its order"
  "e2e/tlscmp report: a screenshot that is not blank, and several results overlaid by name"
  PROPERTIES COST 100)
