#include "rest_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "rest_codec.h"

namespace baton::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kReadTimeout = std::chrono::seconds(60);

http::status http_status(Code code) {
  switch (code) {
    case Code::kOk: return http::status::ok;
    case Code::kInvalidArgument: return http::status::bad_request;
    case Code::kNotFound: return http::status::not_found;
    case Code::kTooLarge: return http::status::payload_too_large;
    case Code::kUnavailable: return http::status::service_unavailable;
    case Code::kDeadlineExceeded: return http::status::gateway_timeout;
    case Code::kInternal: return http::status::internal_server_error;
  }
  return http::status::internal_server_error;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> path_segments(std::string_view target) {
  const size_t q = target.find('?');
  if (q != std::string_view::npos) target = target.substr(0, q);
  std::vector<std::string> parts;
  size_t at = 0;
  while (at < target.size()) {
    const size_t slash = target.find('/', at);
    const size_t end = slash == std::string_view::npos ? target.size() : slash;
    if (end > at) parts.push_back(percent_decode(target.substr(at, end - at)));
    at = end + 1;
  }
  return parts;
}

}  // namespace

std::string metrics_text(const InferenceService& service) {
  std::ostringstream o;
  o << "# HELP baton_requests_total Infer requests that reached a model.\n# TYPE baton_requests_total counter\n";
  const std::shared_ptr<const Catalog> models = service.models();  // one snapshot for the whole page
  const auto each = [&](auto&& f) {
    for (const auto& [name, served] : *models) {
      for (const auto& [v, version] : served->versions) f(name, v, *version);
    }
  };
  // A label value as Prometheus' text format spells it: backslash, double quote and newline escaped (a
  // model is named by its folder, which may hold any of them).
  const auto escaped = [](const std::string& value) {
    std::string out;
    for (char c : value) {
      if (c == '\\' || c == '"') out += '\\';
      out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return out;
  };
  const auto labels = [&](const std::string& name, int64_t v) {
    return "model=\"" + escaped(name) + "\",version=\"" + std::to_string(v) + "\"";
  };
  each([&](const std::string& n, int64_t v, ModelVersion& m) {
    o << "baton_requests_total{" << labels(n, v) << "} " << m.metrics().requests.load() << "\n";
  });
  o << "# HELP baton_request_failures_total Infer requests that failed (refused, bad input, deadline, runtime error).\n"
       "# TYPE baton_request_failures_total counter\n";
  each([&](const std::string& n, int64_t v, ModelVersion& m) {
    o << "baton_request_failures_total{" << labels(n, v) << "} " << m.metrics().failures.load() << "\n";
  });
  o << "# HELP baton_queue_full_total Infer requests refused because the model's queue was full.\n"
       "# TYPE baton_queue_full_total counter\n";
  each([&](const std::string& n, int64_t v, ModelVersion& m) {
    o << "baton_queue_full_total{" << labels(n, v) << "} " << m.metrics().queue_full.load() << "\n";
  });
  o << "# HELP baton_inference_runs_total Interpreter runs (a dynamic batch of requests is one).\n"
       "# TYPE baton_inference_runs_total counter\n";
  each([&](const std::string& n, int64_t v, ModelVersion& m) {
    o << "baton_inference_runs_total{" << labels(n, v) << "} " << m.metrics().runs.load() << "\n";
  });
  o << "# HELP baton_queue_depth Infer requests waiting for an interpreter.\n# TYPE baton_queue_depth gauge\n";
  each([&](const std::string& n, int64_t v, ModelVersion& m) {
    o << "baton_queue_depth{" << labels(n, v) << "} " << m.queue_depth() << "\n";
  });
  o << "# HELP baton_request_duration_seconds Time from queueing to the result, per infer request.\n"
       "# TYPE baton_request_duration_seconds histogram\n";
  each([&](const std::string& n, int64_t v, ModelVersion& m) {
    const ModelMetrics& mm = m.metrics();
    uint64_t cumulative = 0;
    for (size_t i = 0; i < ModelMetrics::kBuckets.size(); ++i) {
      cumulative += mm.bucket_counts[i].load();
      o << "baton_request_duration_seconds_bucket{" << labels(n, v) << ",le=\"" << ModelMetrics::kBuckets[i] << "\"} "
        << cumulative << "\n";
    }
    const uint64_t count = mm.latency_count.load();
    o << "baton_request_duration_seconds_bucket{" << labels(n, v) << ",le=\"+Inf\"} " << count << "\n";
    o << "baton_request_duration_seconds_sum{" << labels(n, v) << "} " << mm.latency_sum_ns.load() / 1e9 << "\n";
    o << "baton_request_duration_seconds_count{" << labels(n, v) << "} " << count << "\n";
  });
  o << "# HELP baton_plugin_deaths_total Deaths of an isolated plugin's process (a crash, a hang past its timeout) "
       "that the server lived through.\n# TYPE baton_plugin_deaths_total counter\n";
  for (const auto& [plugin, deaths] : service.plugin_deaths()) {
    o << "baton_plugin_deaths_total{plugin=\"" << escaped(plugin) << "\"} " << deaths << "\n";
  }
  return o.str();
}

struct RestServer::Impl {
  InferenceService& service;
  RestOptions options;
  asio::io_context io;
  // Keeps the I/O threads running while a connection waits for a model's worker, which is no I/O the
  // context knows of: without it the threads would leave once the acceptor closes on SIGTERM.
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  uint16_t bound_port = 0;

  Impl(InferenceService& s, const RestOptions& o) : service(s), options(o) {}
  void accept();
};

namespace {

using Response = http::response<http::string_body>;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, InferenceService& service, const RestOptions& options)
      : stream_(std::move(socket)), service_(service), options_(options) {}

  void start() { read_header(); }

 private:
  void read_header() {
    parser_.emplace();
    parser_->header_limit(64 * 1024);
    // No limit while the header is read (Beast would fail the header of a large Content-Length with no
    // answer); on_header checks the length and sets the limit for the body (chunked bodies too).
    // (Not boost::none: Boost 1.74's parser compares a Content-Length with an empty limit as over it.)
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    stream_.expires_after(kReadTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return close();
    body_read_ = parser_->is_done();
    const auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    // Refused before the body is read: a client announcing 1 GB is told at once, nothing is buffered.
    if (const auto length = parser_->content_length(); length && *length > options_.max_body_bytes) {
      keep_alive_ = false;
      return reply(Status::error(Code::kTooLarge, "the request body of " + std::to_string(*length) +
                                                      " bytes is over the server's limit of " +
                                                      std::to_string(options_.max_body_bytes) + " bytes (--max-body-bytes)"));
    }
    parser_->body_limit(options_.max_body_bytes);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
  }

  void on_body(beast::error_code ec) {
    if (!ec) body_read_ = true;
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      return reply(Status::error(Code::kTooLarge, "the request body is over the server's limit of " +
                                                      std::to_string(options_.max_body_bytes) + " bytes (--max-body-bytes)"));
    }
    if (ec) {  // the client went away or sent something that is not HTTP
      body_read_ = true;
      return close();
    }
    stream_.expires_never();
    try {
      route(parser_->release());
    } catch (const std::exception& e) {
      reply(Status::error(Code::kInternal, e.what()));
    }
  }

  void route(http::request<http::string_body> req) {
    const std::vector<std::string> p = path_segments(std::string_view(req.target().data(), req.target().size()));
    const bool get = req.method() == http::verb::get, post = req.method() == http::verb::post;
    const auto method_not_allowed = [&](const char* allowed) {
      reply(Status::error(Code::kNotFound, std::string(req.method_string()) + " " + std::string(req.target()) +
                                               ": method not allowed (use " + allowed + ")"),
            http::status::method_not_allowed);
    };
    if (p.size() == 1 && p[0] == "metrics") {
      if (!get) return method_not_allowed("GET");
      return reply_text(http::status::ok, metrics_text(service_), "text/plain; version=0.0.4");
    }
    if (p.empty() || p[0] != "v2") return reply(Status::error(Code::kNotFound, "no such endpoint: " + std::string(req.target())));
    if (p.size() == 1) {
      if (!get) return method_not_allowed("GET");
      return reply_text(http::status::ok, encode_server_metadata(), "application/json");
    }
    if (p.size() == 3 && p[1] == "health" && (p[2] == "live" || p[2] == "ready")) {
      if (!get) return method_not_allowed("GET");
      // The protocol's health answers are the status code alone.
      const bool yes = p[2] == "live" || service_.ready();
      return reply_text(yes ? http::status::ok : http::status::service_unavailable, "", "application/json");
    }
    if (p.size() >= 3 && p[1] == "models") {
      const std::string& model = p[2];
      std::string version;
      size_t rest = 3;
      if (p.size() >= 5 && p[3] == "versions") {
        version = p[4];
        rest = 5;
      }
      const std::string action = p.size() == rest ? "" : p.size() == rest + 1 ? p[rest] : "?";
      if (action == "" || action == "ready") {
        if (!get) return method_not_allowed("GET");
        FoundVersion found;
        Status s = service_.find(model, version, &found);
        if (!s.ok()) return reply(s);
        if (action == "ready") {
          return reply_text(service_.ready() ? http::status::ok : http::status::service_unavailable, "", "application/json");
        }
        return reply_text(http::status::ok, encode_model_metadata(*found.model, *found.version), "application/json");
      }
      if (action == "infer") {
        if (!post) return method_not_allowed("POST");
        return infer(std::move(req), model, version);
      }
    }
    reply(Status::error(Code::kNotFound, "no such endpoint: " + std::string(req.target())));
  }

  void infer(http::request<http::string_body> req, const std::string& model, const std::string& version) {
    const Clock::time_point received = Clock::now();
    const auto refuse = [&](const Status& s, const std::string& id) {
      service_.log().record(id, model, version, s, std::chrono::duration<double>(Clock::now() - received).count());
      reply(s);
    };
    FoundVersion found;
    Status s = service_.find(model, version, &found);
    if (!s.ok()) return refuse(s, "");
    auto request = std::make_shared<InferRequest>();
    request->model = model;
    request->version = version;
    auto encoding = std::make_shared<OutputEncoding>();
    const std::string& body = req.body();
    size_t json_size = body.size();
    if (const auto h = req.find("Inference-Header-Content-Length"); h != req.end()) {
      const std::string v(h->value());
      size_t used = 0;
      unsigned long long n = 0;
      try {
        n = std::stoull(v, &used);
      } catch (...) {
        used = 0;
      }
      if (used == 0 || used != v.size()) {
        return refuse(Status::error(Code::kInvalidArgument, "Inference-Header-Content-Length '" + v + "' is not a byte count"), "");
      }
      json_size = static_cast<size_t>(n);
    }
    s = decode_infer_request(body, json_size, request.get(), encoding.get());
    if (!s.ok()) return refuse(s, request->id);
    if (!service_.begin_request()) return refuse(Status::error(Code::kUnavailable, "the server is shutting down"), request->id);
    // The inputs are moved into the job; the request's name, id and output list stay for the answer.
    InferRequest job = *request;
    request->inputs.clear();
    auto self = shared_from_this();
    s = found.version->submit(std::move(job), [self, request, encoding](InferResult result) {
      // On a model's worker: encode there, then write on this connection's I/O thread.
      auto res = std::make_shared<Response>();
      if (result.status.ok()) {
        EncodedResponse encoded = encode_infer_response(*request, result, *encoding);
        const bool binary = encoded.json_size < encoded.body.size();
        res->result(http::status::ok);
        res->set(http::field::content_type, binary ? "application/octet-stream" : "application/json");
        if (binary) res->set("Inference-Header-Content-Length", std::to_string(encoded.json_size));
        res->body() = std::move(encoded.body);
      } else {
        res->result(http_status(result.status.code));
        res->set(http::field::content_type, "application/json");
        res->body() = encode_error(result.status.message);
      }
      asio::post(self->stream_.get_executor(), [self, res] { self->write(res, true); });
    });
    if (!s.ok()) {
      service_.end_request();
      reply(s);
    }
  }

  void reply(const Status& s, std::optional<http::status> status = std::nullopt) {
    reply_text(status.value_or(http_status(s.code)), encode_error(s.message), "application/json");
  }

  void reply_text(http::status status, std::string body, const char* content_type) {
    auto res = std::make_shared<Response>();
    res->result(status);
    res->set(http::field::content_type, content_type);
    res->body() = std::move(body);
    write(res, false);
  }

  void write(const std::shared_ptr<Response>& res, bool ends_request) {
    res->version(version_);
    res->set(http::field::server, "baton");
    res->keep_alive(keep_alive_ && service_.ready());
    res->prepare_payload();
    stream_.expires_after(kReadTimeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res, ends_request](beast::error_code ec, size_t) {
      if (ends_request) self->service_.end_request();
      if (ec || !res->keep_alive()) return self->close();
      self->read_header();
    });
  }

  void close() {
    beast::error_code ignored;
    if (!body_read_) {
      // A body is still coming (a refused 413): stop sending, then read and drop what the client sends for
      // a moment, so that closing does not reset the connection before the client has read the answer.
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      stream_.expires_after(std::chrono::seconds(2));
      return drain_then_close();
    }
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  void drain_then_close() {
    discard_.resize(64 * 1024);
    stream_.async_read_some(asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec) return self->drain_then_close();
      self->stream_.close();
    });
  }

  beast::tcp_stream stream_;
  InferenceService& service_;
  const RestOptions& options_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = true;
  bool body_read_ = true;  // false from a header until its body has been read
  std::vector<char> discard_;
  unsigned version_ = 11;
};

}  // namespace

void RestServer::Impl::accept() {
  acceptor->async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (!ec) {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);  // an answer goes out whole, no wait for an ACK
      std::make_shared<Session>(std::move(socket), service, options)->start();
    }
    accept();
  });
}

RestServer::RestServer(InferenceService& service, const RestOptions& options)
    : impl_(std::make_unique<Impl>(service, options)) {}

RestServer::~RestServer() { stop(); }

bool RestServer::start(std::string* error) {
  beast::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.host, ec);
  if (ec) {
    *error = "REST: '" + impl_->options.host + "' is not an IP address";
    return false;
  }
  const tcp::endpoint endpoint(address, impl_->options.port);
  tcp::acceptor& a = impl_->acceptor.emplace(impl_->io);
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    *error = "REST: cannot listen on " + impl_->options.host + ":" + std::to_string(impl_->options.port) + ": " + ec.message();
    return false;
  }
  impl_->bound_port = a.local_endpoint().port();
  impl_->accept();
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i) {
    impl_->threads.emplace_back([this] { impl_->io.run(); });
  }
  return true;
}

uint16_t RestServer::port() const { return impl_->bound_port; }

void RestServer::stop_accepting() {
  asio::post(impl_->io, [this] {
    beast::error_code ignored;
    if (impl_->acceptor) impl_->acceptor->close(ignored);
  });
}

void RestServer::stop() {
  impl_->work.reset();
  impl_->io.stop();
  for (std::thread& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  impl_->threads.clear();
}

}  // namespace baton::serve
