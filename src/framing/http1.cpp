// HTTP/1.1 as bytes in and out (see framing/http.hpp), through Debian's
// http-parser: the client's requests pipelined in order, each response
// matched to the oldest unanswered request; the server answers each
// request it parses, pipelined ones in order, and holds each to its caps.

#include <http_parser.h>

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstring>
#include <deque>

#include "framing/http.hpp"

namespace tlscmp::framing {

std::optional<std::uint64_t> response_size_of(std::string_view path, std::uint64_t most) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  path.remove_prefix(1);
  const std::string_view digits = path.substr(0, path.find_first_of("?#"));
  std::uint64_t size = 0;
  const auto [at, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size);
  if (digits.empty() || ec != std::errc() || at != digits.data() + digits.size() || size > most)
    return std::nullopt;
  return size;
}

HttpReply reply_to(std::string_view method, std::string_view path, std::uint64_t most, std::uint64_t number) {
  const auto size = response_size_of(path, most);
  const bool known = method == "GET" || method == "POST" || method == "HEAD";
  if (known && size) return {200, *size, {}};
  return {known ? 404u : 405u, 0,
          fmt::format("request {} asked for {} {}, which names no response size (/BYTES)", number,
                      method.substr(0, 16), path.substr(0, 64))};
}

std::string unexpected_status(const HttpAsk& ask, unsigned status) {
  return fmt::format("the server answered a request ({} {}) with status {}",
                     ask.request_bytes == 0 ? "GET" : "POST", ask.path, status);
}

void HttpOutput::sent(std::size_t n) {
  at_ += n;
  if (at_ == bytes_.size()) {
    bytes_.clear();
    at_ = 0;
  }
}

void HttpOutput::add(std::span<const std::byte> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
}

void HttpOutput::add(std::string_view text) {
  add({reinterpret_cast<const std::byte*>(text.data()), text.size()});
}

void HttpOutput::add_zeros(std::size_t n) {
  bytes_.resize(bytes_.size() + n, std::byte{0});
}

namespace {

std::string parser_error(const http_parser& parser) {
  return http_errno_description(static_cast<http_errno>(parser.http_errno));
}

bool parser_failed(const http_parser& parser) {
  return HTTP_PARSER_ERRNO(&parser) != HPE_OK && HTTP_PARSER_ERRNO(&parser) != HPE_PAUSED;
}

// A body still to go out, in pieces as the output has room.
struct Zeros {
  std::uint64_t left = 0;

  void into(HttpOutput& out) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, out.room()));
    out.add_zeros(n);
    left -= n;
  }
};

// ---- client

struct Response {
  unsigned status = 0;
  std::uint64_t body = 0;
  bool complete = false;
};

int on_response_body(http_parser* p, const char*, std::size_t n) {
  static_cast<Response*>(p->data)->body += n;
  return 0;
}

int on_response_complete(http_parser* p) {
  auto* r = static_cast<Response*>(p->data);
  r->status = p->status_code;
  r->complete = true;
  http_parser_pause(p, 1);  // what follows answers the next request, if any
  return 0;
}

class H1Client final : public HttpClientCodec {
 public:
  explicit H1Client(const HttpAsk& ask) : ask_(ask) {
    head_ = ask.request_bytes == 0
                ? fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: tlscmp\r\nAccept: */*\r\n\r\n",
                              ask.path, ask.authority)
                : fmt::format(
                      "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: tlscmp\r\nContent-Type: "
                      "application/octet-stream\r\nContent-Length: {}\r\n\r\n",
                      ask.path, ask.authority, ask.request_bytes);
    http_parser_init(&parser_, HTTP_RESPONSE);
    http_parser_settings_init(&settings_);
    settings_.on_body = on_response_body;
    settings_.on_message_complete = on_response_complete;
    parser_.data = &response_;
  }

  void ask(std::int64_t asked_ns) override {
    ++asked_;
    unanswered_.push_back(asked_ns);
    ++unsent_;
  }

  std::span<const std::byte> output() override {
    while (out_.room() > 0 && (body_.left > 0 || unsent_ > 0)) {
      if (body_.left > 0) {
        body_.into(out_);
        continue;
      }
      out_.add(head_);
      body_.left = ask_.request_bytes;
      --unsent_;
    }
    return out_.pending();
  }
  void sent(std::size_t n) override { out_.sent(n); }

  std::string input(std::span<const std::byte> bytes, std::int64_t now,
                    std::vector<HttpAnswer>& answers) override {
    const auto* data = reinterpret_cast<const char*>(bytes.data());
    for (std::size_t at = 0; at < bytes.size();) {
      if (unanswered_.empty()) return "the server sent bytes no request asked for";
      if (first_ns_ == 0) first_ns_ = now;
      at += http_parser_execute(&parser_, &settings_, data + at, bytes.size() - at);
      const std::uint64_t number = answered_ + 1;
      if (parser_failed(parser_))
        return fmt::format("the response to request {} is not HTTP/1.1: {}", number, parser_error(parser_));
      if (!response_.complete) continue;
      if (response_.status != 200)
        return fmt::format("the server answered request {} ({} {}) with status {}", number,
                           ask_.request_bytes == 0 ? "GET" : "POST", ask_.path, response_.status);
      if (!http_should_keep_alive(&parser_)) {
        if (unanswered_.size() > 1)
          return fmt::format("the server closes the connection after request {}, and keep-alive was asked",
                             number);
        server_closes_ = true;
      }
      answers.push_back({unanswered_.front(), first_ns_, now, response_.body});
      ++answered_;
      unanswered_.pop_front();
      response_ = Response{};
      first_ns_ = 0;
      http_parser_pause(&parser_, 0);
    }
    return {};
  }

  std::size_t in_flight() const override { return unanswered_.size(); }
  bool server_closes() const override { return server_closes_; }

 private:
  HttpAsk ask_;
  std::string head_;
  HttpOutput out_;
  Zeros body_;
  std::uint64_t unsent_ = 0;
  std::deque<std::int64_t> unanswered_;  // each request's time, oldest first
  std::uint64_t answered_ = 0;
  std::int64_t first_ns_ = 0;  // the front response's first byte; 0: none yet
  bool server_closes_ = false;
  http_parser parser_{};
  http_parser_settings settings_{};
  Response response_;
};

// ---- server

struct Request {
  std::string url;
  std::size_t header_bytes = 0;
  std::uint64_t body = 0;
  bool complete = false;
  bool too_large = false;
};

int count_header(http_parser* p, std::size_t n) {
  auto* r = static_cast<Request*>(p->data);
  r->header_bytes += n;
  if (r->header_bytes <= kMaxHttpHeaderBytes) return 0;
  r->too_large = true;
  return 1;
}

int on_request_url(http_parser* p, const char* at, std::size_t n) {
  if (count_header(p, n) != 0) return 1;
  static_cast<Request*>(p->data)->url.append(at, n);
  return 0;
}

int on_request_header(http_parser* p, const char*, std::size_t n) {
  return count_header(p, n);
}

int on_request_body(http_parser* p, const char*, std::size_t n) {
  static_cast<Request*>(p->data)->body += n;
  return 0;
}

int on_request_complete(http_parser* p) {
  static_cast<Request*>(p->data)->complete = true;
  http_parser_pause(p, 1);  // answered before the next is parsed
  return 0;
}

class H1Server final : public HttpServerCodec {
 public:
  explicit H1Server(std::uint64_t most) : most_(most) {
    http_parser_init(&parser_, HTTP_REQUEST);
    http_parser_settings_init(&settings_);
    settings_.on_url = on_request_url;
    settings_.on_header_field = on_request_header;
    settings_.on_header_value = on_request_header;
    settings_.on_body = on_request_body;
    settings_.on_message_complete = on_request_complete;
    parser_.data = &request_;
  }

  std::string input(std::span<const std::byte> bytes) override {
    const auto* data = reinterpret_cast<const char*>(bytes.data());
    for (std::size_t at = 0; at < bytes.size() && !over_;) {
      at += http_parser_execute(&parser_, &settings_, data + at, bytes.size() - at);
      if (request_.too_large) {
        refuse("431 Request Header Fields Too Large");
        return fmt::format("request {}'s headers passed {} KiB: answered 431 and closed", answered_ + 1,
                           kMaxHttpHeaderBytes / 1024);
      }
      if (parser_failed(parser_)) {
        refuse("400 Bad Request");
        return fmt::format("request {} is not HTTP/1.1 ({}): answered 400 and closed", answered_ + 1,
                           parser_error(parser_));
      }
      if (!request_.complete) break;
      if (std::string why = answer(); !why.empty()) return why;
      request_ = Request{};
      http_parser_pause(&parser_, 0);
    }
    return {};
  }

  std::span<const std::byte> output() override {
    while (out_.room() > 0 && !queue_.empty()) {
      Piece& piece = queue_.front();
      if (!piece.head.empty()) {
        out_.add(piece.head);
        piece.head.clear();
      }
      piece.body.into(out_);
      if (piece.body.left == 0) queue_.pop_front();
    }
    return out_.pending();
  }
  void sent(std::size_t n) override { out_.sent(n); }
  bool over() const override { return over_; }
  bool mid_request() const override { return !request_.url.empty() || request_.header_bytes > 0; }

 private:
  struct Piece {
    std::string head;
    Zeros body;
  };

  // An error answer, and the connection's end after it.
  void refuse(const char* status) {
    queue_.push_back(
        {fmt::format("HTTP/1.1 {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status), {}});
    over_ = true;
  }

  // The request parsed whole, answered; "" or why the connection ends.
  std::string answer() {
    const HttpReply reply = reply_to(http_method_str(static_cast<http_method>(parser_.method)), request_.url,
                                     most_, answered_ + 1);
    if (reply.status != 200) {
      refuse(reply.status == 404 ? "404 Not Found" : "405 Method Not Allowed");
      return reply.refusal;
    }
    const bool keep = http_should_keep_alive(&parser_) != 0;
    queue_.push_back({fmt::format("HTTP/1.1 200 OK\r\nServer: tlscmp\r\nContent-Type: "
                                  "application/octet-stream\r\nContent-Length: {}\r\n{}\r\n",
                                  reply.body, keep ? "" : "Connection: close\r\n"),
                      {parser_.method == HTTP_HEAD ? 0 : reply.body}});
    ++answered_;
    body_received_ += request_.body;
    over_ = !keep;
    return {};
  }

  std::uint64_t most_;
  http_parser parser_{};
  http_parser_settings settings_{};
  Request request_;
  std::deque<Piece> queue_;
  HttpOutput out_;
  bool over_ = false;
};

}  // namespace

std::unique_ptr<HttpClientCodec> http1_client(const HttpAsk& ask) {
  return std::make_unique<H1Client>(ask);
}

std::unique_ptr<HttpServerCodec> http1_server(std::uint64_t most) {
  return std::make_unique<H1Server>(most);
}

}  // namespace tlscmp::framing
