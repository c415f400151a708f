// The facts that explain a run: /proc/stat, a thread's last CPU, merging
// streams' TCP_INFO, and the text notes.

#include <doctest/doctest.h>

#include "kinds/side_result.hpp"
#include "measure/host.hpp"
#include "measure/memory.hpp"
#include "protocol/messages.hpp"
#include "render/facts.hpp"
#include "transport/datagram.hpp"
#include "transport/socket.hpp"

using namespace tlscmp;
using namespace tlscmp::measure;

TEST_CASE("the host's CPU split comes from two /proc/stat readings") {
  const auto before = parse_host_ticks("cpu  100 0 50 800 10 0 5 0 0 0\ncpu0 1 2 3\n");
  const auto after = parse_host_ticks("cpu  160 20 90 860 20 5 15 40 0 0\ncpu0 1 2 3\n");
  REQUIRE(before);
  REQUIRE(after);
  const auto split = host_cpu_between(*before, *after);
  REQUIRE(split);
  // 80 user+nice, 40 system, 70 idle+iowait, 5 irq, 10 softirq, 40 steal: 245 ticks.
  CHECK(split->ticks == 245);
  CHECK(split->user == doctest::Approx(100.0 * 80 / 245));
  CHECK(split->system == doctest::Approx(100.0 * 40 / 245));
  CHECK(split->idle == doctest::Approx(100.0 * 70 / 245));
  CHECK(split->irq == doctest::Approx(100.0 * 5 / 245));
  CHECK(split->softirq == doctest::Approx(100.0 * 10 / 245));
  CHECK(split->steal == doctest::Approx(100.0 * 40 / 245));
  CHECK_FALSE(host_cpu_between(*after, *after));  // no tick passed: no split
  CHECK_FALSE(parse_host_ticks("intr 1 2 3\n"));
  CHECK_FALSE(parse_host_ticks("cpu  1 2 3\n"));  // too few counts
  CHECK(read_host_ticks());                       // this host has one
}

TEST_CASE("the host's UDP counters: /proc/net/snmp's two Udp lines by name, plus snmp6's Udp6 lines") {
  const std::string header =
      "Tcp: RtoAlgorithm ActiveOpens\nTcp: 1 2\n"
      "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors\n";
  const std::string six = "Ip6InReceives 5\nUdp6InDatagrams 1\nUdp6RcvbufErrors 2\n";
  const auto before =
      parse_host_udp(header + "Udp: 100 3 7 200 5 1 0\nUdpLite: InDatagrams\nUdpLite: 9\n", six);
  const auto after = parse_host_udp(header + "Udp: 1100 3 19 2200 15 4 0\n", "");
  REQUIRE(before);
  REQUIRE(after);
  CHECK(before->in_datagrams == 101);  // IPv4's and IPv6's
  CHECK(before->out_datagrams == 200);
  CHECK(before->rcvbuf_errors == 7);
  const HostUdp moved = host_udp_between(HostUdp{100, 200, 7, 5, 1}, *after);
  CHECK(moved.in_datagrams == 1000);
  CHECK(moved.out_datagrams == 2000);
  CHECK(moved.in_errors == 12);
  CHECK(moved.rcvbuf_errors == 10);
  CHECK(moved.sndbuf_errors == 3);
  CHECK(host_udp_between(*after, *before).out_datagrams == 0);  // a counter that went back: none
  CHECK_FALSE(parse_host_udp("Tcp: A\nTcp: 1\n", six));
  CHECK_FALSE(parse_host_udp("Udp: InDatagrams NoPorts\nUdp: 1 2\n", six));  // the errors are missing
  CHECK(read_host_udp());                                                    // this host has them
}

TEST_CASE("QUIC's UDP facts cross the wire and merge over connections") {
  RunFacts a;
  a.udp_path = UdpPath{10, 5, 12000, 600, 1200, 10, 0, std::nullopt};
  a.host_udp = HostUdp{30, 40, 1, 1, 0};
  RunFacts b;
  b.udp_path = UdpPath{20, 7, 25000, 800, 1350, 5, 0, std::nullopt};
  b.host_udp = a.host_udp;
  const RunFacts all = merge_facts({a, b});
  REQUIRE(all.udp_path);
  CHECK(all.udp_path->datagrams_sent == 30);
  CHECK(all.udp_path->datagrams_received == 12);
  CHECK(all.udp_path->bytes_sent == 37000);
  CHECK(all.udp_path->send_calls == 15);
  CHECK(all.udp_path->largest_sent == 1350);
  REQUIRE(all.host_udp);
  CHECK(all.host_udp->in_datagrams == 30);  // one host: not added up

  kinds::SideResult side;
  side.facts = all;
  const std::vector<std::byte> frame = protocol::encode(protocol::kind_result(side));
  const kinds::SideResult back = protocol::read_result<kinds::SideResult>(std::get<protocol::KindResult>(
      protocol::decode(std::span(frame).subspan(protocol::kFrameHeaderBytes))));
  REQUIRE(back.facts.udp_path);
  CHECK(back.facts.udp_path->bytes_sent == 37000);
  CHECK(back.facts.udp_path->largest_sent == 1350);
  REQUIRE(back.facts.host_udp);
  CHECK(back.facts.host_udp->rcvbuf_errors == 1);

  render::FactsRun run{1, false, "quic", "1", &all, &all};
  const std::string notes = render::render_notable({run});
  CHECK(notes.find("client 30 datagrams sent (largest 1350 B, 2.0 a send call, no GSO), 12 received") !=
        std::string::npos);
  CHECK(notes.find("UDP drops: 1 received and 0 sent on the client's host (1 for a full receive buffer)") !=
        std::string::npos);
  const auto json = render::facts_json(all);
  CHECK(json["udp"]["path"]["datagrams_per_send_call"] == 2.0);
  CHECK(json["udp"]["path"]["port_connections"].is_null());  // a client's
  CHECK(render::facts_json(RunFacts{})["udp"].is_null());
}

TEST_CASE("a QUIC server's port counts: what they moved by over the run, its connections, on the wire") {
  const UdpPath before{100, 200, 50000, 250000, 1200, 40, 0, 1};
  const UdpPath after{130, 1200, 90000, 1450000, 1250, 52, 0, 3};
  const UdpPath run = udp_path_between(before, after);
  CHECK(run.datagrams_sent == 30);
  CHECK(run.datagrams_received == 1000);
  CHECK(run.bytes_sent == 40000);
  CHECK(run.bytes_received == 1200000);
  CHECK(run.send_calls == 12);
  CHECK(run.largest_sent == 1250);  // as it stands at the end
  CHECK(run.port_connections == 3u);
  CHECK(udp_path_between(after, before).datagrams_received == 0);  // a counter that went back: none

  RunFacts server;
  server.udp_path = run;
  kinds::SideResult side;
  side.facts = merge_facts({server, RunFacts{}});  // the first stream's alone: counted once
  const std::vector<std::byte> frame = protocol::encode(protocol::kind_result(side));
  const kinds::SideResult back = protocol::read_result<kinds::SideResult>(std::get<protocol::KindResult>(
      protocol::decode(std::span(frame).subspan(protocol::kFrameHeaderBytes))));
  REQUIRE(back.facts.udp_path);
  CHECK(back.facts.udp_path->datagrams_received == 1000);
  CHECK(back.facts.udp_path->port_connections == 3u);
  CHECK(render::facts_json(back.facts)["udp"]["path"]["port_connections"] == 3);

  RunFacts client;
  client.udp_path = UdpPath{1000, 30, 1200000, 40000, 1200, 40, 0, std::nullopt};
  render::FactsRun both{1, false, "quic", "1", &client, &back.facts};
  const std::string notes = render::render_notable({both});
  CHECK(notes.find("; server port 1000 datagrams received, 30 sent (its 3 connections together)") !=
        std::string::npos);
}

TEST_CASE("a thread's last CPU is field 39 of its stat, whatever its name holds") {
  std::string rest;
  for (int field = 3; field <= 38; ++field)
    rest += " 0";
  CHECK(last_cpu_from_stat("1234 (tlscmp) S" + rest.substr(2) + " 7 0 0\n") == 7);
  CHECK(last_cpu_from_stat("1234 (a) b (c) S" + rest.substr(2) + " 3 0 0\n") == 3);
  CHECK(last_cpu_from_stat("1234 (short) S 1 2\n") == -1);
  CHECK(last_cpu_from_stat("") == -1);
}

TEST_CASE("CPU lists read as the kernel writes them, and a CPU not allowed is named") {
  CHECK(cpu_list({0, 1, 2, 3, 6}) == "0-3,6");
  CHECK(cpu_list({1}) == "1");
  CHECK(cpu_list({0, 2, 4, 5}) == "0,2,4-5");
  CHECK(check_cpu(allowed_cpus().front()).empty());
  CHECK(check_cpu(8000).find("CPU 8000 is not one this process may run on here: ") == 0);
  const ThreadPin bad(8000);
  CHECK_FALSE(bad.error().empty());
}

TEST_CASE("pinning holds while the pin lives, and gives the thread its CPUs back") {
  const std::vector<int> cpus = allowed_cpus();
  {
    const ThreadPin pin(cpus.back());
    REQUIRE(pin.error().empty());
    CHECK(allowed_cpus() == std::vector<int>{cpus.back()});
  }
  CHECK(allowed_cpus() == cpus);
}

TEST_CASE("one side's streams merge: retransmits and limits add up, windows take the highest") {
  RunFacts a;
  a.tcp = TcpInfo{};
  a.tcp->total_retrans = 2;
  a.tcp->rtt_us = 100;
  a.tcp->cwnd_max = 10;
  a.tcp->busy_us = 1000;
  a.tcp->rwnd_limited_us = 500;
  a.tcp->sndbuf_limited_us = 0;
  a.host_cpu = HostCpu{};
  a.host_cpu->steal = 3;
  a.cpu_samples = {{0, 4}};
  a.pinned_cpu = 0;
  RunFacts b = a;
  b.tcp->total_retrans = 1;
  b.tcp->rtt_us = 300;
  b.tcp->cwnd_max = 40;
  b.cpu_samples = {{0, 1}, {1, 5}};
  const RunFacts all = merge_facts({a, b});
  REQUIRE(all.tcp);
  CHECK(all.tcp->total_retrans == 3);
  CHECK(all.tcp->rtt_us == 200);
  CHECK(all.tcp->cwnd_max == 40);
  CHECK(*all.tcp->busy_us == 2000);
  CHECK(all.tcp->rwnd_limited_share() == doctest::Approx(0.5));
  CHECK(all.host_cpu->steal == 3);
  CHECK(all.cpu_samples == std::map<int, std::uint32_t>{{0, 5}, {1, 5}});
  CHECK_FALSE(all.main_cpu());  // half and half: no CPU holds two thirds
  CHECK(all.pinned_cpu == 0);
}

TEST_CASE("notes name retransmits, steal and a pair on other CPUs, and nothing else") {
  RunFacts quiet;
  quiet.tcp = TcpInfo{};
  quiet.host_cpu = HostCpu{};
  quiet.host_cpu->steal = 0.5;  // at most 1%: not notable
  quiet.cpu_samples = {{0, 9}};
  RunFacts server = quiet;
  server.cpu_samples = {{1, 9}};
  const render::FactsRun tcp{1, false, "tcp", "1", &quiet, &server};
  CHECK(render::render_notable({tcp}).empty());
  CHECK(render::placement(tcp) == "client cpu 0, server cpu 1");

  RunFacts lossy = quiet;
  lossy.tcp->total_retrans = 4;
  lossy.tcp->bytes_retrans = 5792;
  RunFacts stolen = server;
  stolen.host_cpu->steal = 7.25;
  stolen.cpu_samples = {{0, 9}};  // the server's thread on the client's CPU
  const render::FactsRun tls{1, false, "tls", "1", &lossy, &stolen};
  CHECK(render::render_notable({tcp, tls}) ==
        "note: round 1 tls: 4 segments retransmitted (5792 bytes) by the client; steal 7.2% on the server's "
        "host; ran on client cpu 0, server cpu 0; the tcp run of this round on client cpu 0, server cpu 1\n");
  // The same runs in another round: each pairs with its own round's first.
  const render::FactsRun tls2{2, false, "tls", "2", &quiet, &server};
  CHECK(render::render_notable({tcp, tls2}).empty());
}

TEST_CASE("memory readings: sockstat's TCP pages, statm's resident pages, and growth per connection") {
  using namespace tlscmp::measure;
  CHECK(parse_sockstat_tcp_pages(
            "sockets: used 130\nTCP: inuse 5 orphan 0 tw 2 alloc 7 mem 31\nUDP: inuse 1 mem 2\n") == 31);
  CHECK_FALSE(parse_sockstat_tcp_pages("UDP: inuse 1 mem 2\n"));
  CHECK_FALSE(parse_sockstat_tcp_pages(""));
  CHECK(parse_statm_resident_pages("5000 1200 300 10 0 900 0\n") == 1200);
  CHECK_FALSE(parse_statm_resident_pages("garbage"));
  const PerConnection grown = per_connection({1000, 10, 500}, {101000, 8, 50500}, 100);
  CHECK(grown.rss_bytes == doctest::Approx(1000));
  CHECK(grown.heap_bytes == doctest::Approx(500));
  CHECK(grown.tcp_bytes ==
        doctest::Approx(-2.0 * static_cast<double>(page_bytes()) / 100));  // shown, not clamped
  CHECK_FALSE(per_connection({std::nullopt, 10, 1}, {5, 10, 1}, 100).rss_bytes);
  const MemoryReading now = read_memory();
  CHECK(now.rss_bytes.value_or(0) > 0);
#if defined(__SANITIZE_ADDRESS__)
  CHECK_FALSE(now.heap_bytes);  // the sanitizer's allocator, which mallinfo2 does not count
#else
  CHECK(now.heap_bytes.value_or(0) > 0);
#endif
}

TEST_CASE("-B's addresses: one, a list, an IPv4 range, written as inet_ntop writes them") {
  std::string problem;
  CHECK(tlscmp::parse_address_list("127.0.0.1", problem) == std::vector<std::string>{"127.0.0.1"});
  CHECK(tlscmp::parse_address_list("10.0.0.254-10.0.1.1", problem) ==
        std::vector<std::string>{"10.0.0.254", "10.0.0.255", "10.0.1.0", "10.0.1.1"});
  CHECK(tlscmp::parse_address_list("::1,fd00:0::2", problem) == std::vector<std::string>{"::1", "fd00::2"});
  CHECK(tlscmp::parse_address_list("10.0.0.2-10.0.0.1", problem).empty());
  CHECK(problem.find("lowest first") != std::string::npos);
  CHECK(tlscmp::parse_address_list("10.0.0.0-10.0.255.255", problem).empty());
  CHECK(problem == "more than 1024 addresses");
  CHECK(tlscmp::parse_address_list("1.2.3.4,", problem).empty());
  CHECK(tlscmp::local_port_count() > 0);
}
