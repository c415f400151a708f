// tlscmp report and --html: pages from real runs of every kind, opened in
// headless Chromium (--dump-dom for what is on the page, --screenshot for
// whether anything is drawn). Skipped, with the reason, without chromium.
// TLSCMP_REPORT_SCREENSHOT=FILE.png keeps the bulk page's screenshot (the one
// in docs/).

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

const char* const kChromium = "/usr/bin/chromium";

bool have_chromium() {
  if (std::filesystem::exists(kChromium)) return true;
  skip("no chromium (scripts/install-deps installs it)");
  return false;
}

std::vector<std::string> chromium(const std::filesystem::path& page, std::vector<std::string> args) {
  std::vector<std::string> command{kChromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--hide-scrollbars",
                                   "--no-first-run",
                                   "--user-data-dir=" + (page.parent_path() / "chromium").string()};
  command.insert(command.end(), args.begin(), args.end());
  command.push_back("file://" + page.string());
  return command;
}

// The page's DOM after Chromium loaded it (and ran whatever it would run).
std::string dom_of(const std::filesystem::path& page) {
  const ProcessResult r = run_process(chromium(page, {"--dump-dom"}), std::chrono::seconds(90));
  INFO("chromium stderr: " << r.err.substr(0, 2000));
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.find("<html") != std::string::npos);
  return r.out;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

// A real run with --html beside -J: the page, and the JSON it was drawn from.
json run_with_page(const TempDir& dir, const std::string& name, std::vector<std::string> args) {
  args.insert(args.begin(), "client");
  args.insert(args.end(), {"--html", dir.file(name + ".html"), "-J"});
  const ProcessResult r = run_tlscmp(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("wrote the report " + dir.file(name + ".html")) != std::string::npos);
  return json::parse(r.out);
}

void check_page(const std::string& dom, std::size_t charts) {
  CHECK(count(dom, "<svg class=\"chart\"") >= charts);
  CHECK(count(dom, "<figure") == count(dom, "<details>"));  // every chart has its data table
  CHECK(count(dom, "<figcaption>") == count(dom, "<figure"));
  // No number that is not one, however fmt or a browser would spell it.
  CHECK(!std::regex_search(dom, std::regex(R"(\b(nan|inf|infinity|undefined)\b)", std::regex::icase)));
  CHECK(dom.find("<script") == std::string::npos);
  CHECK(dom.find("To run it again") != std::string::npos);
}

std::string two(double v) {
  return fmt::format("{:.2f}", v);
}

}  // namespace

TEST_CASE("--html pages from real runs of every kind: the headline from the JSON, a chart per figure") {
  if (!have_chromium()) return;
  const TempDir dir;

  const json bulk = run_with_page(dir, "bulk", {"-t", "0.3", "-i", "0.1", "--repeat", "2"});
  const std::string bulk_dom = dom_of(dir.path() / "bulk.html");
  check_page(bulk_dom, 6);  // per round, ratios, CPU, where TLS's CPU goes, intervals, handshakes
  CHECK(bulk_dom.find("CPU goes, per side (s/GiB)") != std::string::npos);
  CHECK(bulk_dom.find("tls client (sender)") != std::string::npos);
  CHECK(bulk_dom.find("tcp: median ") != std::string::npos);  // with the unit, and the 95% CI
  CHECK(bulk_dom.find(" MB/s (95% CI ") != std::string::npos);
  const json& ratio = bulk["summary"]["tls"]["over_tcp_transfer_time"];
  CHECK(bulk_dom.find("TLS took " + two(ratio["median"].get<double>()) + "x as long as TCP: 95% CI " +
                      two(ratio["ci95_low"].get<double>()) + "–" + two(ratio["ci95_high"].get<double>()) +
                      ", 2 rounds.") != std::string::npos);
  CHECK(bulk_dom.find("Throughput over time (-i)") != std::string::npos);
  CHECK(bulk_dom.find("tlscmp client -t 0.3 -i 0.1 --repeat 2 --html") != std::string::npos);

  // One round: no interval to give, said so, not "nan".
  run_with_page(dir, "single", {"-n", "2M", "--repeat", "1"});
  const std::string single_dom = dom_of(dir.path() / "single.html");
  check_page(single_dom, 3);
  CHECK(single_dom.find("as long as TCP: 1 round, too few for a CI.") != std::string::npos);

  const json rr = run_with_page(dir, "rr", {"--rr", "64/1K", "-n", "300", "--repeat", "2"});
  const std::string rr_dom = dom_of(dir.path() / "rr.html");
  check_page(rr_dom, 3);
  CHECK(rr_dom.find("TLS ran " +
                    two(rr["rr_summary"]["tls"]["over_tcp"]["transactions_per_s"]["median"].get<double>()) +
                    "x the transactions per second of TCP") != std::string::npos);
  CHECK(rr_dom.find("Latency by percentile") != std::string::npos);
  CHECK(rr_dom.find("99.9%") != std::string::npos);

  const json crr = run_with_page(dir, "crr", {"--crr", "-n", "40", "--repeat", "2"});
  const std::string crr_dom = dom_of(dir.path() / "crr.html");
  check_page(crr_dom, 2);
  CHECK(crr_dom.find("TLS made " +
                     two(crr["crr_summary"]["tls"]["over_tcp"]["connections_per_s"]["median"].get<double>()) +
                     "x the connections per second of TCP") != std::string::npos);
  CHECK(crr_dom.find("Each phase of a connection") != std::string::npos);

  const json http =
      run_with_page(dir, "http", {"--http", "2", "--streams", "4", "-n", "200", "--repeat", "2"});
  const std::string http_dom = dom_of(dir.path() / "http.html");
  check_page(http_dom, 5);  // requests per round, latency, first byte, handshake, wire bytes
  CHECK(http_dom.find("TLS served " +
                      two(http["http_summary"]["tls"]["over_tcp"]["requests_per_s"]["median"].get<double>()) +
                      "x the HTTP requests per second of TCP") != std::string::npos);
  CHECK(http_dom.find("Time to first byte by percentile") != std::string::npos);
  CHECK(http_dom.find("Bytes on the wire per request") != std::string::npos);

  // BoringSSL has no DTLS server (DTLSv1_listen): UDP alone there.
  const bool dtls = !boringssl_build();
  run_with_page(dir, "datagram",
                {"--mode", dtls ? "both-udp" : "udp", "-n", "300", "-b", "10M", "--repeat", "2"});
  const std::string udp_dom = dom_of(dir.path() / "datagram.html");
  check_page(udp_dom, 3);
  if (dtls) CHECK(udp_dom.find("DTLS delivered") != std::string::npos);
  CHECK(udp_dom.find("Loss per sender") != std::string::npos);
  CHECK(udp_dom.find("kernel drops") != std::string::npos);

  run_with_page(dir, "handshakes", {"--handshakes", "20"});
  const std::string hs_dom = dom_of(dir.path() / "handshakes.html");
  check_page(hs_dom, 1);
  CHECK(hs_dom.find("A full TLS handshake took") != std::string::npos);

  const ProcessResult sweep =
      run_tlscmp({"sweep", "--msg-size", "1K,4K", "--framing", "len4", "-n", "1M", "--repeat", "2", "--out",
                  dir.file("sweep"), "--html", dir.file("sweep.html")});
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  const std::string sweep_dom = dom_of(dir.path() / "sweep.html");
  check_page(sweep_dom, 3);
  CHECK(sweep_dom.find("A sweep of 2 settings") != std::string::npos);
  CHECK(sweep_dom.find("msg-size=4K") != std::string::npos);
}

TEST_CASE("tlscmp report: a screenshot that is not blank, and several results overlaid by name") {
  if (!have_chromium()) return;
  const TempDir dir;
  for (const char* name : {"before", "after"}) {
    const ProcessResult r = run_tlscmp({"client", "-n", "8M", "--repeat", "3", "-J"});
    REQUIRE(r.exit_code == 0);
    std::ofstream(dir.file(std::string(name) + ".json")) << r.out;
  }
  const ProcessResult one = run_tlscmp({"report", dir.file("before.json"), "-o", dir.file("one.html")});
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const std::filesystem::path png = dir.path() / "one.png";
  const ProcessResult shot = run_process(
      chromium(dir.path() / "one.html", {"--window-size=900,1400", "--screenshot=" + png.string()}),
      std::chrono::seconds(90));
  REQUIRE(std::filesystem::exists(png));
  const ProcessResult ink = run_process(
      {"/usr/bin/python3", std::string(TLSCMP_SOURCE_DIR) + "/tests/support/png_ink.py", png.string()});
  INFO(ink.err);
  REQUIRE(ink.exit_code == 0);
  CHECK(std::stod(ink.out) > 0.01);  // charts and text, not a white page
  if (const char* keep = std::getenv("TLSCMP_REPORT_SCREENSHOT"); keep != nullptr && *keep != '\0') {
    std::filesystem::copy_file(png, keep, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(dir.path() / "one.html",
                               std::filesystem::path(keep).replace_extension(".html"),
                               std::filesystem::copy_options::overwrite_existing);
  }

  const ProcessResult both =
      run_tlscmp({"report", dir.file("before.json"), dir.file("after.json"), "-o", dir.file("both.html")});
  REQUIRE(both.exit_code == 0);
  const std::string dom = dom_of(dir.path() / "both.html");
  check_page(dom, 4);
  CHECK(dom.find("<b>before:</b> TLS took") != std::string::npos);
  CHECK(dom.find("<b>after:</b> TLS took") != std::string::npos);
  CHECK(dom.find("before tcp: median") != std::string::npos);
  CHECK(dom.find("after tls: median") != std::string::npos);
  CHECK(dom.find("before client") != std::string::npos);  // the environment, a column per file and side
}

TEST_CASE("a hostile result file cannot run script in the page, and a cut run is marked partial") {
  if (!have_chromium()) return;
  const TempDir dir;
  const ProcessResult r = run_tlscmp({"client", "-n", "2M", "--repeat", "2", "-J"});
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  const std::string attack =
      "<script>document.title='owned'</script><img src=x onerror=\"document.title='owned'\">";
  j["environment"]["client"]["cpu_model"] = attack;
  j["environment"]["server"]["kernel"] = attack;
  j["test"]["command_line"] = "</pre>" + attack;
  j["runs"][0]["variant"] = attack;
  j["interrupted"] = true;
  j["runs"][1]["partial"] = true;
  std::ofstream(dir.file("evil<script>.json")) << j.dump();
  const ProcessResult page =
      run_tlscmp({"report", dir.file("evil<script>.json"), "-o", dir.file("evil.html")});
  INFO(page.err);
  REQUIRE(page.exit_code == 0);
  const std::string dom = dom_of(dir.path() / "evil.html");
  CHECK(dom.find("<script") == std::string::npos);
  CHECK(dom.find("<img") == std::string::npos);
  CHECK(dom.find("owned</title>") == std::string::npos);
  CHECK(dom.find("<title>tlscmp report: evil&lt;script&gt;</title>") != std::string::npos);
  CHECK(dom.find("&lt;script&gt;document.title='owned'&lt;/script&gt;") != std::string::npos);
  CHECK(dom.find("Partial: the run was interrupted") != std::string::npos);
}

TEST_CASE("--html after Ctrl-C: the page of what finished, marked partial, and key exchange groups drawn") {
  if (!have_chromium()) return;
  const TempDir dir;
  BackgroundProcess client({tlscmp_binary(), "client", "-t", "20", "--mode", "tcp", "--repeat", "1", "--html",
                            dir.file("cut.html"), "-J"},
                           dir.file("err"), dir.file("out"));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // well into the run, even sanitized
  CHECK(client.stop(SIGINT) == 130);
  const std::string cut = dom_of(dir.path() / "cut.html");
  CHECK(cut.find("Partial: the run was interrupted") != std::string::npos);
  CHECK(cut.find("round 1 (partial)") != std::string::npos);  // the cut run, in the data table

  const json groups =
      run_with_page(dir, "groups", {"--handshakes", "2", "--compare-groups", "--repeat", "1"});
  const std::string dom = dom_of(dir.path() / "groups.html");
  check_page(dom, 1);
  CHECK(dom.find("key exchange groups") != std::string::npos);
  for (const json& g : groups["groups"]) {
    if (g["error"].is_null()) CHECK(dom.find(g["group"].get<std::string>() + " full") != std::string::npos);
  }
}

TEST_CASE("tlscmp report mistakes get one line that says what to do") {
  const TempDir dir;
  std::ofstream(dir.file("cut.json")) << R"({"tlscmp_version": "0.1.0", "test": {"host": )";
  std::ofstream(dir.file("other.json")) << R"({"name": "not a result"})";
  std::ofstream(dir.file("old.json")) << R"({"tlscmp_version": "0.0.9", "test": {}})";
  expect_mistakes("report",
                  {
                      {{dir.file("missing.json"), "-o", dir.file("x.html")}, 2, "cannot read"},
                      {{dir.file("cut.json"), "-o", dir.file("x.html")}, 2, "is not valid JSON (cut short?)"},
                      {{dir.file("other.json"), "-o", dir.file("x.html")}, 2, "not a tlscmp result"},
                      {{dir.file("old.json"), "-o", dir.file("x.html")}, 2, "made by an older tlscmp?"},
                      {{dir.file("other.json")}, 2, "--output is required"},
                  });
  CHECK(!std::filesystem::exists(dir.file("x.html")));
  // A page that could not be written is refused before the run, not after it.
  expect_mistakes("client",
                  {{{"-n", "1M", "--html", dir.file("no-such-folder/page.html")}, 2, "cannot write there"}});
  expect_mistakes(
      "sweep",
      {{{"--msg-size", "1K,2K", "--html", dir.file("no-such-folder/page.html")}, 2, "cannot write there"}});
}
