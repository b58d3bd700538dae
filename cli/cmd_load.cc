// `benchlab load URL`: the load generator on its own, wrk-style. Prints the result for people,
// optionally writes it as JSON. Exit status: 0 ok, 1 the run failed, 2 bad input.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/parse.h"
#include "loadgen/load.h"

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
  std::string json_path;
};

int BadInput(const std::string& option, const std::string& message) {
  std::cerr << "benchlab load: " << option << ": " << message << "\n";
  return 2;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
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
  if (args.method.empty() || args.method.find_first_of(" \t\r\n") != std::string::npos) {
    return BadInput("--method", "expected one word such as \"GET\", got \"" + args.method + "\"");
  }
  o.method = args.method;
  for (const std::string& h : args.headers) {
    const size_t colon = h.find(':');
    const std::string name = colon == std::string::npos ? "" : Trim(h.substr(0, colon));
    if (name.empty() || name.find_first_of(" \t\r\n") != std::string::npos ||
        h.find_first_of("\r\n") != std::string::npos) {
      return BadInput("--header", "expected \"Name: value\", got \"" + h + "\"");
    }
    o.headers.emplace_back(name, Trim(h.substr(colon + 1)));
  }
  o.body = args.body;
  return 0;
}

int RunLoadCommand(const LoadArgs& args) {
  LoadOptions options;
  if (int rc = BuildOptions(args, options); rc != 0) return rc;
  Result<LoadResult> result = RunLoad(options);
  if (!result.ok()) {
    std::cerr << "benchlab load: " << result.status().message() << "\n";
    return result.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cout << FormatLoadResult(options, *result) << std::flush;
  if (!args.json_path.empty()) {
    std::ofstream out(args.json_path, std::ios::trunc);
    out << LoadResultToJson(*result) << "\n";
    out.close();
    if (!out) {
      std::cerr << "benchlab load: --json: cannot write \"" << args.json_path
                << "\": " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  if (result->requests == 0) {
    std::cerr << "benchlab load: no responses from " << args.url << " (" << result->errors.Total()
              << " errors)\n";
    return 1;
  }
  return 0;
}

}  // namespace

CommandRunner AddLoadCommand(CLI::App& root) {
  auto args = std::make_shared<LoadArgs>();
  CLI::App* cmd = root.add_subcommand(
      "load",
      "Generate closed-loop HTTP/1.1 keep-alive load against one URL and report throughput, "
      "latency percentiles and errors (like wrk).");
  cmd->add_option("url", args->url, "Target, e.g. http://127.0.0.1:8080/ (http only)")->required();
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
  cmd->add_option("--json", args->json_path, "Also write the result as JSON to this file");
  return [args] { return RunLoadCommand(*args); };
}

}  // namespace benchlab
