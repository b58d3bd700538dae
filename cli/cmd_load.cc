// `benchlab load URL`: the load generator on its own, wrk-style, closed loop (-c) or open loop
// (--rate). Prints the result for people, optionally writes it as JSON. docs/load.md is the
// reference. Exit status: 0 ok, 1 the run failed, 2 bad input.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/parse.h"
#include "loadgen/load.h"
#include "loadgen/request.h"
#include "loadgen/request_mix.h"

namespace benchlab {

namespace {

struct LoadArgs {
  std::string url;
  int connections = 10;
  int threads = 1;
  std::string duration = "10s";
  std::string warmup = "0s";
  std::string timeout = "2s";
  std::string cpus;
  std::string method = "GET";
  std::vector<std::string> headers;
  std::string body;
  std::string body_file;
  int depth = 1;
  double rate = 0;
  std::string arrival = "constant";
  uint64_t seed = 1;
  int max_conns = 0;
  int64_t queue = 0;
  std::string spin = "0s";
  std::string engine = "auto";
  uint32_t requests_per_connection = 0;
  // HTTPS; `tls_flags` counts those given, which need an https:// URL.
  double tls_resumption = 1.0;
  std::string tls_version = "1.3";
  std::string alpn = "http/1.1";
  bool insecure = false;
  std::string cacert;
  std::string server_name;
  size_t tls_flags = 0;
  std::string mix_file;
  std::string expect_status;
  std::string expect_body;
  std::string expect_body_file;
  bool has_expect_body = false;
  std::string json_path;
  uint64_t max_body = LoadOptions::kDefaultMaxBody;
};

int BadInput(const std::string& option, const std::string& message) {
  std::cerr << "benchlab load: " << option << ": " << message << "\n";
  return kExitUsage;
}

int BadRequestPart(const Status& st) {
  std::cerr << "benchlab load: " << st.message() << "\n";
  return kExitUsage;
}

// Reads a whole file for an option; the message names the option and the file.
int ReadOption(const std::string& option, const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadInput(option, "cannot read \"" + path + "\": " + std::strerror(errno));
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return kExitOk;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The --tls-* flags into o.tls (set by an https:// URL); 0 or the exit status for bad input.
int BuildTlsOptions(const LoadArgs& args, LoadOptions& o) {
  if (!o.tls) {
    return args.tls_flags == 0
               ? kExitOk
               : BadInput("--tls-*", "TLS options need an https:// URL, got \"" + args.url + "\"");
  }
  TlsLoadOptions& t = *o.tls;
  t.resumption = args.tls_resumption;
  t.version = args.tls_version;
  t.alpn.clear();
  if (args.alpn != "none") {
    for (size_t start = 0; start <= args.alpn.size();) {
      const size_t comma = std::min(args.alpn.find(',', start), args.alpn.size());
      t.alpn.push_back(Trim(args.alpn.substr(start, comma - start)));
      start = comma + 1;
    }
  }
  t.verify = !args.insecure;
  t.ca_file = args.cacert;
  t.server_name = args.server_name;
  if (Status st = ValidateTlsOptions(t); !st.ok()) return BadInput("--tls", st.message());
  return kExitOk;
}

// Turns the parsed flags into LoadOptions; returns 0 or the exit status for bad input.
int BuildOptions(const LoadArgs& args, LoadOptions& o) {
  if (Status st = ParseUrlInto(args.url, o); !st.ok()) return BadInput("URL", st.message());
  if (args.connections < 1) {
    return BadInput("--connections",
                    "expected a positive integer, got " + std::to_string(args.connections));
  }
  if (args.threads < 1) {
    return BadInput("--threads",
                    "expected a positive integer, got " + std::to_string(args.threads));
  }
  o.connections = args.connections;
  o.threads = args.threads;
  struct DurationFlag {
    const char* name;
    const std::string& text;
    std::chrono::nanoseconds& out;
    bool allow_zero;
  } durations[] = {{"--duration", args.duration, o.duration, false},
                   {"--warmup", args.warmup, o.warmup, true},
                   {"--timeout", args.timeout, o.timeout, false}};
  for (const DurationFlag& flag : durations) {
    Result<std::chrono::nanoseconds> d = ParseDuration(flag.text);
    if (!d.ok()) return BadInput(flag.name, d.status().message());
    if (!flag.allow_zero && d->count() <= 0) {
      return BadInput(flag.name, "must be longer than zero, got \"" + flag.text + "\"");
    }
    flag.out = *d;
  }
  if (!args.cpus.empty()) {
    Result<std::vector<int>> cpus = ParseCpuList(args.cpus);
    if (!cpus.ok()) return BadInput("--cpus", cpus.status().message());
    o.cpus = *cpus;
  }
  // The rules of CheckRequestParts; its message names the option, the part and quotes the bytes.
  if (Status st = CheckRequestParts("--method", args.method, "/", {}); !st.ok()) {
    return BadRequestPart(st);
  }
  o.method = args.method;
  for (const std::string& h : args.headers) {
    const size_t colon = h.find(':');
    if (colon == std::string::npos) {
      return BadInput("--header", "expected \"Name: value\", got \"" + h + "\"");
    }
    o.headers.emplace_back(Trim(h.substr(0, colon)), Trim(h.substr(colon + 1)));
    if (Status st = CheckRequestParts("--header", "GET", "/", {o.headers.back()}); !st.ok()) {
      return BadRequestPart(st);
    }
  }
  o.body = args.body;
  if (!args.body_file.empty()) {
    if (!args.body.empty()) return BadInput("--body-file", "give --body or --body-file, not both");
    if (int rc = ReadOption("--body-file", args.body_file, o.body); rc != 0) return rc;
  }
  if (args.depth < 1 || args.depth > LoadOptions::kMaxDepth) {
    return BadInput("--depth", "expected 1 to " + std::to_string(LoadOptions::kMaxDepth) +
                                   ", got " + std::to_string(args.depth));
  }
  o.depth = args.depth;
  if (!(args.rate >= 0) || args.rate > 1e9) {
    return BadInput("--rate",
                    "expected requests per second (> 0), got " + std::to_string(args.rate));
  }
  o.rate = args.rate;
  if (args.arrival == "constant") {
    o.arrival = Arrival::kConstant;
  } else if (args.arrival == "poisson") {
    o.arrival = Arrival::kPoisson;
  } else {
    return BadInput("--arrival",
                    "expected \"constant\" or \"poisson\", got \"" + args.arrival + "\"");
  }
  o.seed = args.seed;
  if (args.max_conns != 0 && args.max_conns < args.connections) {
    return BadInput("--max-conns", "must be at least --connections (" +
                                       std::to_string(args.connections) + "), got " +
                                       std::to_string(args.max_conns));
  }
  o.max_conns = args.max_conns;
  if (args.queue < 0) return BadInput("--queue", "must be >= 0");
  o.max_queue = args.queue;
  Result<std::chrono::nanoseconds> spin = ParseDuration(args.spin);
  if (!spin.ok()) return BadInput("--spin", spin.status().message());
  if (spin->count() < 0 || *spin > std::chrono::seconds(1)) {
    return BadInput("--spin", "expected 0s to 1s, got \"" + args.spin + "\"");
  }
  o.spin = *spin;
  if (o.rate == 0 && (args.max_conns != 0 || args.queue != 0 || args.arrival != "constant" ||
                      spin->count() != 0)) {
    return BadInput("--rate",
                    "--arrival, --max-conns, --queue and --spin need an open loop (--rate R)");
  }
  if (std::optional<IoEngine> engine = ParseIoEngine(args.engine)) {
    o.engine = *engine;
  } else {
    return BadInput("--engine",
                    "expected \"auto\", \"io_uring\" or \"epoll\", got \"" + args.engine + "\"");
  }
  o.requests_per_connection = args.requests_per_connection;
  if (int rc = BuildTlsOptions(args, o); rc != 0) return rc;
  if (!args.mix_file.empty()) {
    std::string text;
    if (int rc = ReadOption("--mix", args.mix_file, text); rc != 0) return rc;
    Result<std::vector<MixRequest>> mix = ParseRequestMix(text, args.mix_file);
    if (!mix.ok()) return BadInput("--mix", mix.status().message());
    o.mix = std::move(*mix);
  }
  if (!args.expect_status.empty()) {
    Result<std::vector<int>> codes = ParseStatusList(args.expect_status);
    if (!codes.ok()) return BadInput("--expect-status", codes.status().message());
    o.expect_status = *codes;
  }
  o.max_body = args.max_body;
  if (args.has_expect_body) o.expect_body = args.expect_body;
  if (!args.expect_body_file.empty()) {
    if (args.has_expect_body) {
      return BadInput("--expect-body-file", "give --expect-body or --expect-body-file, not both");
    }
    std::string body;
    if (int rc = ReadOption("--expect-body-file", args.expect_body_file, body); rc != 0) return rc;
    o.expect_body = std::move(body);
  }
  return kExitOk;
}

int RunLoadCommand(LoadArgs& args, bool has_expect_body) {
  args.has_expect_body = has_expect_body;
  LoadOptions options;
  if (int rc = BuildOptions(args, options); rc != 0) return rc;
  Result<LoadResult> result = GenerateLoad(options);
  if (!result.ok()) {
    std::cerr << "benchlab load: " << result.status().message() << "\n";
    return result.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  std::cout << FormatLoadResult(options, *result) << std::flush;
  if (!args.json_path.empty()) {
    std::ofstream out(args.json_path, std::ios::trunc);
    out << LoadResultToJson(*result) << "\n";
    out.close();
    if (!out) {
      std::cerr << "benchlab load: --json: cannot write \"" << args.json_path
                << "\": " << std::strerror(errno) << "\n";
      return kExitFailure;
    }
  }
  if (result->requests == 0) {
    std::cerr << "benchlab load: no responses from " << args.url << " (" << result->errors.Total()
              << " errors)\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

CommandRunner AddLoadCommand(CLI::App& root) {
  auto args = std::make_shared<LoadArgs>();
  CLI::App* cmd = root.add_subcommand(
      "load",
      "Generate HTTP/1.1 keep-alive load against one URL, closed loop (-c) or open loop (--rate), "
      "and report throughput, latency percentiles and errors (like wrk). See docs/load.md.");
  cmd->add_option("url", args->url, "Target, e.g. http://127.0.0.1:8080/ or https://host/")
      ->required();
  cmd->add_option("-c,--connections", args->connections, "Open connections in total")
      ->capture_default_str();
  cmd->add_option("-t,--threads", args->threads, "Worker threads (at most one per connection)")
      ->capture_default_str();
  cmd->add_option("-d,--duration", args->duration, "Measured interval, e.g. 10s or 500ms")
      ->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "Load applied before measuring, not counted")
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout, "Per-request timeout; the connection is reopened")
      ->capture_default_str();
  cmd->add_option("--cpus", args->cpus, "Pin worker threads round-robin to CPUs, e.g. 0-1,3");
  cmd->add_option("-m,--method", args->method, "Request method")->capture_default_str();
  cmd->add_option("-H,--header", args->headers, "Extra request header \"Name: value\" (repeatable)")
      ->allow_extra_args(false)
      ->take_all();
  cmd->add_option("--body", args->body, "Request body (Content-Length is added)");
  cmd->add_option("--body-file", args->body_file, "Read the request body from this file");
  cmd->add_option("--depth", args->depth, "Requests in flight per connection (pipelining)")
      ->capture_default_str();
  cmd->add_option("--rate", args->rate,
                  "Open loop: requests per second over all threads (latency from the intended "
                  "send time)");
  cmd->add_option("--arrival", args->arrival, "Open loop: constant or poisson")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Open loop: seed of the poisson schedule")
      ->capture_default_str();
  cmd->add_option("--max-conns", args->max_conns,
                  "Open loop: open connections up to this many when none is free "
                  "(default: --connections)");
  cmd->add_option("--queue", args->queue,
                  "Open loop: slots that may wait for a connection before slots are dropped "
                  "(default: one second of --rate)");
  cmd->add_option("--spin", args->spin,
                  "Open loop: poll instead of sleeping this close to the next slot, e.g. 50us "
                  "(more CPU, less lag)")
      ->capture_default_str();
  cmd->add_option("--engine", args->engine,
                  "I/O engine: io_uring, epoll, or auto (io_uring where the kernel allows it)")
      ->capture_default_str();
  cmd->add_option("--requests-per-connection", args->requests_per_connection,
                  "Close each connection and open a new one after this many requests, so "
                  "connects and TLS handshakes are part of the load (0: keep connections)")
      ->capture_default_str();
  CLI::Option* tls_options[] = {
      cmd->add_option("--tls-resumption", args->tls_resumption,
                      "https: share of new connections that resume a session (0.0 to 1.0)")
          ->capture_default_str(),
      cmd->add_option("--tls-version", args->tls_version, "https: the TLS version, 1.3 or 1.2")
          ->capture_default_str(),
      cmd->add_option("--alpn", args->alpn,
                      "https: ALPN protocols offered, comma-separated, with http/1.1; none: no "
                      "ALPN")
          ->capture_default_str(),
      cmd->add_flag("-k,--insecure", args->insecure,
                    "https: do not verify the server's certificate or name"),
      cmd->add_option("--cacert", args->cacert,
                      "https: verify against the CA certificates in this PEM file (default: the "
                      "system's)"),
      cmd->add_option("--server-name", args->server_name,
                      "https: the name sent (SNI) and verified (default: the URL's host)"),
  };
  cmd->add_option("--mix", args->mix_file,
                  "Request mix: a JSON Lines file of weighted requests (docs/load.md)");
  cmd->add_option("--expect-status", args->expect_status,
                  "Count a mismatch when the status is not one of these, e.g. 200 or 2xx,304");
  CLI::Option* expect_body =
      cmd->add_option("--expect-body", args->expect_body,
                      "Count a mismatch when the (decoded) body differs from this");
  cmd->add_option("--expect-body-file", args->expect_body_file,
                  "Like --expect-body, with the body read from this file");
  cmd->add_option("--max-body", args->max_body,
                  "Count a response whose body exceeds this many bytes as body_too_large, read no "
                  "further and reopen its connection (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--json", args->json_path, "Also write the result as JSON to this file");
  return [args, expect_body, tls_options] {
    for (CLI::Option* option : tls_options) args->tls_flags += option->count();
    return RunLoadCommand(*args, expect_body->count() > 0);
  };
}

}  // namespace benchlab
