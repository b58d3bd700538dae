// External load generators (wrk 4.1, h2load 1.52 from Debian 12) in benchlab's terms: the command
// line (and wrk's Lua script, h2load's body file) for one run, and the figures parsed from what
// the tool printed. Pure functions: no I/O; the caller writes the files and spawns the tool
// (agent/external_run.h). Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace benchlab {

// What benchlab asks of an external tool for one run (one warm-up or measured run).
struct ExternalLoadSpec {
  std::string tool;    // "wrk" | "h2load"
  std::string binary;  // path or name of the executable
  std::string host;    // e.g. "127.0.0.1"; an IPv6 literal ("::1") is bracketed in the URL
  int port = 0;
  std::string method = "GET";
  std::string path = "/";  // printable URL characters only (percent-encode the rest), no '#'
  // Names are tokens, unique regardless of case; no Content-Length (the tool sets it); values
  // without control bytes other than tab.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // empty: none
  int connections = 1;
  int threads = 1;
  int depth = 1;            // requests in flight per connection (h2load -m; wrk: only 1)
  double duration_s = 1;    // how long the tool measures
  double timeout_s = 2;     // per-request timeout (wrk only; see BuildExternalCommand)
  std::string script_path;  // wrk: where the Lua script will be written (when one is needed)
  std::string body_path;    // h2load: where the body file will be written (-d)
};

struct ExternalCommand {
  std::vector<std::string> argv;  // argv[0] = spec.binary
  std::string script;             // wrk: Lua script text to write at spec.script_path ("" none)
  std::string body_file;          // h2load: bytes to write at spec.body_path ("" none)
};

// InvalidArgument, naming the field, for what the tool cannot do as asked.
//
// wrk:    wrk -t T -c C -d Ns --timeout Ns --latency [-s SCRIPT] http://HOST:PORT/PATH
//   wrk reads durations in whole seconds only (it rejects "1.5s" and "500ms"): duration_s and
//   timeout_s are rounded UP to whole seconds, at least 1. connections must be a multiple of
//   threads (wrk gives each thread connections/threads and drops the rest). depth must be 1 (no
//   pipelining without a script). A method other than GET, headers or a body go in a Lua script
//   (every byte escaped); the caller writes it at script_path. A header named Host (any case)
//   replaces wrk's; names are otherwise sent as given (in the Lua table's order).
// h2load: h2load --h1 -t T -c C -m DEPTH -D NNNms [-d BODYFILE] [-H 'name: value']... URL
//   Always HTTP/1.1 (--h1). Duration to the millisecond (at least 1 ms). The method goes in
//   -H ':method: X' (h2load's default is GET, or POST with -d); a body in -d BODYFILE, which h2load
//   1.52 limits to one request in flight per connection, so depth must then be 1. Host goes in
//   ':authority'. h2load lowercases header names and strips a value's leading blanks, so a value
//   must not start with a blank or be empty. timeout_s is checked but NOT passed: h2load has no
//   per-request timeout, and its -N inactivity timeout aborts 1.52 in a -D run ("libev: I/O
//   watcher with invalid fd", SIGABRT) whenever it fires.
Result<ExternalCommand> BuildExternalCommand(const ExternalLoadSpec& spec);

// The shortest run the tool can make: wrk 1 s, h2load 1 ms; 0 for an unknown tool.
double MinimumRunSeconds(std::string_view tool);

// The figures an external tool printed, in benchlab's window terms. nullopt: not reported.
struct ExternalLoadFigures {
  std::string tool;
  std::string version;  // neither tool prints its version in a run's output: ""
  // Responses completed, of any status (as benchlab counts). wrk: "N requests in". h2load:
  // succeeded + failed - errored, i.e. its done requests less those that ended without a
  // response (h2load's own req/s is this count over the -D duration).
  uint64_t requests = 0;
  // The tool's own measured time: wrk "in 2.02s"; h2load "finished in 504.28ms" (its wall time,
  // a little over -D).
  double duration_s = 0;
  double rps = 0;  // as the tool reports (wrk Requests/sec; h2load req/s)
  // Latency in microseconds, at the printed resolution (2 decimals of us/ms/s/m). wrk: its
  // --latency distribution (p50..p99), mean, stdev and max of responses; no min. h2load: min,
  // max, mean and sd of "time for request"; no percentiles. With no response completed the tools
  // print zeros for want of data: all nullopt then.
  std::optional<uint64_t> p50_us, p75_us, p90_us, p99_us;
  std::optional<double> mean_us, stdev_us, max_us, min_us;
  // wrk: "Non-2xx or 3xx responses" (wrk counts status > 399). h2load: 4xx + 5xx.
  uint64_t non_2xx_3xx = 0;
  std::map<std::string, uint64_t> status_classes;  // h2load "2xx".."5xx"; wrk: {}
  // wrk: its "Socket errors" line (absent: all 0; a response later than the timeout is a timeout
  // and is left out of the latency; a request never answered counts nowhere). h2load cannot tell
  // connect, read and write apart: errors_read = errored - timeout (resets, protocol errors,
  // requests abandoned or never issued), errors_timeout = timeout; connect and write are 0 and
  // listed unavailable. In a -D run h2load 1.52 counts nothing for a connection refused, reset or
  // answered with garbage: that client just stops for the rest of the run (only the throughput
  // shows it).
  uint64_t errors_connect = 0, errors_read = 0, errors_write = 0, errors_timeout = 0;
  std::optional<uint64_t> failed;     // h2load "failed" (non-2xx/3xx responses + errored)
  std::optional<double> bytes_per_s;  // wrk Transfer/sec; h2load "MB/s" of "finished in"
  // Window figures this tool cannot give, by the store's column names.
  std::vector<std::string> unavailable;
};

// InvalidArgument naming the missing or malformed line, with a short excerpt of the output.
// Lines neither tool prints for a run (stderr, a script's output) are ignored; a key line that
// appears twice is an error (two runs in one output).
Result<ExternalLoadFigures> ParseWrkOutput(std::string_view text);
Result<ExternalLoadFigures> ParseH2loadOutput(std::string_view text);

}  // namespace benchlab
