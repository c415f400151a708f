#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "render/svg.hpp"

using namespace tlscmp::render::svg;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

Point pt(double x, double y) {
  return Point{x, y, std::nullopt, std::nullopt, {}};
}
Point pt(double x, double y, double low, double high) {
  return Point{x, y, low, high, {}};
}

}  // namespace

TEST_CASE("nice ticks step by 1, 2 or 5 times a power of ten") {
  CHECK(nice_ticks(0, 97, 6) == std::vector<double>{0, 20, 40, 60, 80});
  CHECK(nice_ticks(0, 1, 5) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  CHECK(nice_ticks(1.3, 4.9, 4) == std::vector<double>{2, 3, 4});
  CHECK(nice_ticks(-10, 10, 4) == std::vector<double>{-10, -5, 0, 5, 10});
  CHECK(nice_ticks(5, 5, 4) == std::vector<double>{5});
}

TEST_CASE("a linear scale widens to round ticks and maps the domain onto the range") {
  const Scale s = linear_scale(3, 97, 0, 100, true);  // from zero
  CHECK(s.d0 == 0);
  CHECK(s.d1 == 100);
  CHECK(s(50) == doctest::Approx(50));
  CHECK(s.ticks(5) == std::vector<double>{0, 20, 40, 60, 80, 100});
  const Scale loose = linear_scale(2000, 3000, 200, 0, false);  // pixels grow downwards
  CHECK(loose.d0 == 2000);
  CHECK(loose.d1 == 3000);
  CHECK(loose(2000) == doctest::Approx(200));
  CHECK(loose(3000) == doctest::Approx(0));
  const Scale one = linear_scale(7, 7, 0, 10, false);  // a single value gets a band
  CHECK(one.d0 < 7);
  CHECK(one.d1 > 7);
}

TEST_CASE("a log scale spans whole decades, with 2 and 5 between when there are few") {
  const Scale wide = log_scale(3, 970, 0, 300);
  CHECK(wide.d0 == doctest::Approx(1));
  CHECK(wide.d1 == doctest::Approx(1000));
  CHECK(wide(10) == doctest::Approx(100));
  CHECK(wide(100) == doctest::Approx(200));
  CHECK(wide.ticks() == std::vector<double>{1, 10, 100, 1000});
  const Scale narrow = log_scale(20, 400, 0, 1);
  CHECK(narrow.ticks() == std::vector<double>{10, 20, 50, 100, 200, 500, 1000});
}

TEST_CASE("tick text is short: k, M and G past ten thousand, significant digits below one") {
  CHECK(tick_text(0) == "0");
  CHECK(tick_text(1500) == "1500");
  CHECK(tick_text(25000) == "25k");
  CHECK(tick_text(2.5e6) == "2.5M");
  CHECK(tick_text(3e9) == "3G");
  CHECK(tick_text(0.25) == "0.25");
  CHECK(tick_text(0.001234) == "0.00123");
  CHECK(tick_text(-40) == "-40");
}

TEST_CASE("escape leaves no markup") {
  CHECK(escape(R"(<script>alert("x")</script> & 'y')") ==
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;");
}

TEST_CASE("a chart: titled SVG, a marker per point, error bars, a legend, a data table, text escaped") {
  Chart c;
  c.id = "c1";
  c.title = "Throughput <per> round";
  c.x_title = "round";
  c.y_title = "MB/s";
  c.x_names = {"1", "2", "3"};
  c.reference = 1.0;
  c.series.push_back({"tcp", {pt(0, 10), pt(1, 12), pt(2, 11, 10.5, 11.5)}, false});
  c.series.push_back({"<img src=x onerror=alert(1)>", {pt(0, 5), pt(1, 6), pt(2, 5.5)}, true});
  const std::string out = tlscmp::render::svg::render(c);
  CHECK(out.find(R"(<figure id="c1")") == 0);
  CHECK(out.find(R"(role="img")") != std::string::npos);
  CHECK(out.find("<title id=\"c1-title\">Throughput &lt;per&gt; round</title>") != std::string::npos);
  CHECK(out.find("<img") == std::string::npos);
  CHECK(out.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(count(out, "<circle") == 3 + 1);  // tcp's points, and its legend marker
  CHECK(count(out, "<rect") == 3 + 1);    // the second series' squares, and its legend marker
  CHECK(count(out, "<tr><td>") == 6);     // every point in the table
  CHECK(count(out, "class=\"reference\"") == 1);
  CHECK(out.find("<details><summary>Data: Throughput &lt;per&gt; round</summary>") != std::string::npos);
  CHECK(count(out, "stroke-width=\"1.5\"") == 1);  // one error bar
}

TEST_CASE("a stacked chart draws a bar per value, and a chart without points draws nothing") {
  Chart c;
  c.id = "c2";
  c.title = "CPU";
  c.stacked = true;
  c.x_names = {"client", "server"};
  c.series.push_back({"user", {pt(0, 1), pt(1, 2)}, false});
  c.series.push_back({"system", {pt(0, 3), pt(1, 1)}, false});
  const std::string out = tlscmp::render::svg::render(c);
  CHECK(count(out, "stroke=\"#fff\"") == 4);
  Chart empty;
  empty.series.push_back({"nothing", {}, false});
  CHECK(tlscmp::render::svg::render(empty).empty());
}

TEST_CASE("a series' own colour and shape win over its position: a variant looks alike on every chart") {
  Chart c;
  c.title = "t";
  c.x_title = "x";
  c.y_title = "y";
  Series first("tls", {{0, 1, std::nullopt, std::nullopt, "a"}});
  first.colour = 1;  // the page's colour for tls
  first.shape = 1;   // the second result file's shape: a square
  c.series.push_back(first);
  const std::string svg = tlscmp::render::svg::render(c);
  CHECK(svg.find(series_colour(1)) != std::string::npos);
  CHECK(svg.find(series_colour(0)) == std::string::npos);
  CHECK(svg.find("<rect x=") != std::string::npos);  // the square marker
}
