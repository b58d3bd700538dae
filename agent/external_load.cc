#include "agent/external_load.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "agent/conformance.h"  // QuoteBytes
#include "common/parse.h"

namespace benchlab {
namespace {

// ---------------------------------------------------------------------------------------------
// Command lines

Status Invalid(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(field + ": " + what);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsToken(std::string_view s) {  // RFC 9110 token: method and header names
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != std::string_view::npos;
  });
}

bool IsPathChar(char c) {  // RFC 3986 pchar, '/', '?' and '%' (percent-encoded bytes)
  static constexpr std::string_view kExtra = "-._~!$&'()*+,;=:@/?%";
  return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != std::string_view::npos;
}

// Every byte of `bytes` as a Lua string literal: printable ASCII as itself, quote and backslash
// escaped, anything else as a three-digit decimal escape (three digits, so a digit after it
// cannot join the escape).
std::string LuaQuote(std::string_view bytes) {
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char esc[5];
      std::snprintf(esc, sizeof(esc), "\\%03u", static_cast<unsigned>(c));
      out += esc;
    }
  }
  return out + "\"";
}

Status CheckSpec(const ExternalLoadSpec& s) {
  if (s.binary.empty()) return Invalid("binary", "empty");
  if (s.host.empty()) return Invalid("host", "empty");
  for (char c : s.host) {
    if (c <= 0x20 || c >= 0x7f || std::string_view("/?#@[]").find(c) != std::string_view::npos) {
      return Invalid("host", "not a host name or address: " + QuoteBytes(s.host));
    }
  }
  if (s.port < 1 || s.port > 65535) {
    return Invalid("port", "expected 1-65535, got " + std::to_string(s.port));
  }
  if (!IsToken(s.method)) return Invalid("method", "not an HTTP method: " + QuoteBytes(s.method));
  if (s.path.empty() || s.path[0] != '/' ||
      !std::all_of(s.path.begin(), s.path.end(), IsPathChar)) {
    return Invalid("path", "expected '/' then URL characters (percent-encode the rest), got " +
                               QuoteBytes(s.path));
  }
  std::set<std::string> names;
  for (const auto& [name, value] : s.headers) {
    if (!IsToken(name)) return Invalid("headers", "not a header name: " + QuoteBytes(name));
    if (!names.insert(Lower(name)).second) {
      return Invalid("headers", "\"" + name + "\" given twice; one value per name");
    }
    if (Lower(name) == "content-length") {
      return Invalid("headers", "Content-Length is set by the tool from the body");
    }
    for (char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) {
        return Invalid("headers",
                       "value of \"" + name + "\" holds a control byte: " + QuoteBytes(value));
      }
    }
  }
  if (s.connections < 1) return Invalid("connections", "must be at least 1");
  if (s.threads < 1) return Invalid("threads", "must be at least 1");
  if (s.connections < s.threads) {
    return Invalid("connections", std::to_string(s.connections) + " is fewer than threads " +
                                      std::to_string(s.threads) + "; each thread needs one");
  }
  if (s.depth < 1) return Invalid("depth", "must be at least 1");
  // A week bounds both so that whole seconds and milliseconds fit any integer.
  if (!std::isfinite(s.duration_s) || s.duration_s <= 0 || s.duration_s > 604800) {
    return Invalid("duration_s",
                   "expected more than 0 and at most a week, got " + std::to_string(s.duration_s));
  }
  if (!std::isfinite(s.timeout_s) || s.timeout_s <= 0 || s.timeout_s > 604800) {
    return Invalid("timeout_s",
                   "expected more than 0 and at most a week, got " + std::to_string(s.timeout_s));
  }
  return Status::Ok();
}

std::string Url(const ExternalLoadSpec& s) {
  const bool v6 = s.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + s.host + "]" : s.host) + ":" + std::to_string(s.port) + s.path;
}

// wrk reads whole seconds only: rounded up, at least 1 (1e-9 absorbs 2.0000000001 from sums).
std::string WholeSeconds(double s) {
  return std::to_string(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(s - 1e-9)))) + "s";
}

Result<ExternalCommand> BuildWrk(const ExternalLoadSpec& s) {
  if (s.depth != 1) {
    return Invalid("depth",
                   "wrk sends one request at a time per connection (it pipelines only "
                   "from a script); got " +
                       std::to_string(s.depth));
  }
  if (s.connections % s.threads != 0) {
    return Invalid("connections",
                   "wrk gives each thread connections/threads connections and "
                   "drops the rest; " +
                       std::to_string(s.connections) + " is not a multiple of threads " +
                       std::to_string(s.threads));
  }
  ExternalCommand cmd;
  cmd.argv = {s.binary,
              "-t",
              std::to_string(s.threads),
              "-c",
              std::to_string(s.connections),
              "-d",
              WholeSeconds(s.duration_s),
              "--timeout",
              WholeSeconds(s.timeout_s),
              "--latency"};
  if (s.method != "GET" || !s.body.empty() || !s.headers.empty()) {
    if (s.script_path.empty()) {
      return Invalid("script_path", "wrk needs a Lua script for a method, headers or a body");
    }
    cmd.script = "-- benchlab: the request of this run (agent/external_load.cc)\n";
    cmd.script += "wrk.method = " + LuaQuote(s.method) + "\n";
    if (!s.body.empty()) cmd.script += "wrk.body = " + LuaQuote(s.body) + "\n";
    for (const auto& [name, value] : s.headers) {
      // wrk adds "Host" unless the table has that exact key.
      const std::string key = Lower(name) == "host" ? "Host" : name;
      cmd.script += "wrk.headers[" + LuaQuote(key) + "] = " + LuaQuote(value) + "\n";
    }
    cmd.argv.insert(cmd.argv.end(), {"-s", s.script_path});
  }
  cmd.argv.push_back(Url(s));
  return cmd;
}

Result<ExternalCommand> BuildH2load(const ExternalLoadSpec& s) {
  if (!s.body.empty() && s.depth != 1) {
    return Invalid("depth",
                   "h2load sends a body (-d) with one request in flight per HTTP/1.1 "
                   "connection; got " +
                       std::to_string(s.depth));
  }
  if (!s.body.empty() && s.body_path.empty()) {
    return Invalid("body_path", "h2load reads a body from a file (-d); none given");
  }
  const int64_t ms = std::llround(s.duration_s * 1000);
  if (ms < 1) {
    return Invalid("duration_s",
                   "h2load measures at least 1 ms; got " + std::to_string(s.duration_s));
  }
  ExternalCommand cmd;
  cmd.argv = {s.binary, "--h1",
              "-t",     std::to_string(s.threads),
              "-c",     std::to_string(s.connections),
              "-m",     std::to_string(s.depth),
              "-D",     std::to_string(ms) + "ms"};
  if (!s.body.empty()) {
    cmd.argv.insert(cmd.argv.end(), {"-d", s.body_path});
    cmd.body_file = s.body;
  }
  if (s.method != (s.body.empty() ? "GET" : "POST")) {
    cmd.argv.insert(cmd.argv.end(), {"-H", ":method: " + s.method});
  }
  for (const auto& [name, value] : s.headers) {
    if (value.empty() || value[0] == ' ' || value[0] == '\t') {
      return Invalid("headers", "h2load drops an empty value and strips leading blanks; \"" + name +
                                    "\" has " + QuoteBytes(value));
    }
    // h2load would send a second Host line; ":authority" replaces its own.
    const std::string key = Lower(name) == "host" ? ":authority" : name;
    cmd.argv.insert(cmd.argv.end(), {"-H", key + ": " + value});
  }
  cmd.argv.push_back(Url(s));
  return cmd;
}

// ---------------------------------------------------------------------------------------------
// Output

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    out.push_back(TrimSpace(text.substr(0, end)));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<double> Number(std::string_view s) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0) {
    return std::nullopt;
  }
  return v;
}

std::optional<uint64_t> Count(std::string_view s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Splits "2.45MB" into 2.45 and "MB".
std::optional<std::pair<double, std::string_view>> NumberAndUnit(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  auto n = Number(s.substr(0, i));
  if (!n) return std::nullopt;
  return std::make_pair(*n, s.substr(i));
}

// "44.00us", "1.18ms", "1.25s", "1.00m" (wrk from 51 s), in microseconds. A unit is required.
std::optional<double> TimeUs(std::string_view s) {
  auto nu = NumberAndUnit(s);
  if (!nu) return std::nullopt;
  static const std::pair<std::string_view, double> kUnits[] = {
      {"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"h", 3600e6}};
  for (const auto& [unit, scale] : kUnits) {
    if (nu->second == unit) return nu->first * scale;
  }
  return std::nullopt;
}

// "0.93MB", "737.51B", "2.65KB": binary multiples, as both tools print them.
std::optional<double> Bytes(std::string_view s) {
  auto nu = NumberAndUnit(s);
  if (!nu) return std::nullopt;
  static const std::pair<std::string_view, double> kUnits[] = {
      {"B", 1},
      {"KB", 1024.0},
      {"MB", 1024.0 * 1024},
      {"GB", 1024.0 * 1024 * 1024},
      {"TB", 1024.0 * 1024 * 1024 * 1024},
      {"PB", 1024.0 * 1024 * 1024 * 1024 * 1024}};
  for (const auto& [unit, scale] : kUnits) {
    if (nu->second == unit) return nu->first * scale;
  }
  return std::nullopt;
}

uint64_t RoundUs(double us) { return static_cast<uint64_t>(std::llround(us)); }

// Reads one tool's output: finds its key lines and reports what is wrong in a person's words.
class Output {
 public:
  Output(std::string tool, std::string_view text) : tool_(std::move(tool)), lines_(Lines(text)) {}

  // The one line for which `match` holds into `line` (nullopt when none). Two are an error.
  Status Find(const std::string& what, const std::function<bool(std::string_view)>& match,
              std::optional<std::string_view>* line) const {
    line->reset();
    for (std::string_view l : lines_) {
      if (!match(l)) continue;
      if (*line) return Status::InvalidArgument(tool_ + " output: two " + what + " lines");
      *line = l;
    }
    return Status::Ok();
  }
  Status FindPrefix(std::string_view prefix, std::optional<std::string_view>* line) const {
    return Find(
        "'" + std::string(TrimSpace(prefix)) + "'",
        [prefix](std::string_view l) { return l.starts_with(prefix); }, line);
  }

  Status Missing(const std::string& what) const {
    // The last line says most (an error the tool printed, or where it stopped); a short one
    // comes with the line before it.
    std::string tail;
    for (auto it = lines_.rbegin(); it != lines_.rend(); ++it) {
      if (it->empty()) continue;
      if (!tail.empty()) {
        tail = std::string(*it) + "\n" + tail;
        break;
      }
      tail = std::string(*it);
      if (tail.size() >= 60) break;
    }
    if (tail.empty())
      return Status::InvalidArgument(tool_ + " output: empty, no " + what + " line");
    return Status::InvalidArgument(tool_ + " output: no " + what + " line; it ends " +
                                   QuoteBytes(tail, 120));
  }
  Status Malformed(const std::string& what, std::string_view line) const {
    return Status::InvalidArgument(tool_ + " output: cannot read the " + what + " line " +
                                   QuoteBytes(std::string(line), 100));
  }

 private:
  std::string tool_;
  std::vector<std::string_view> lines_;
};

// "connect 0, read 7, write 0, timeout 4" into (label, count) pairs, in order.
std::optional<std::vector<std::pair<std::string_view, uint64_t>>> LabelledCounts(std::string_view s,
                                                                                 bool count_first) {
  std::vector<std::pair<std::string_view, uint64_t>> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    auto words = Words(s.substr(0, comma));
    if (words.size() != 2) return std::nullopt;
    auto n = Count(words[count_first ? 0 : 1]);
    if (!n) return std::nullopt;
    out.emplace_back(words[count_first ? 1 : 0], *n);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

// Checks that `got` has exactly `labels`, in order, and returns their counts.
std::optional<std::vector<uint64_t>> Expect(
    const std::optional<std::vector<std::pair<std::string_view, uint64_t>>>& got,
    const std::vector<std::string_view>& labels) {
  if (!got || got->size() != labels.size()) return std::nullopt;
  std::vector<uint64_t> out;
  for (size_t i = 0; i < labels.size(); ++i) {
    if ((*got)[i].first != labels[i]) return std::nullopt;
    out.push_back((*got)[i].second);
  }
  return out;
}

}  // namespace

Result<ExternalCommand> BuildExternalCommand(const ExternalLoadSpec& spec) {
  if (spec.tool != "wrk" && spec.tool != "h2load") {
    return Invalid("tool", "expected wrk or h2load, got " + QuoteBytes(spec.tool));
  }
  BENCHLAB_RETURN_IF_ERROR(CheckSpec(spec));
  return spec.tool == "wrk" ? BuildWrk(spec) : BuildH2load(spec);
}

double MinimumRunSeconds(std::string_view tool) {
  if (tool == "wrk") return 1;
  if (tool == "h2load") return 0.001;
  return 0;
}

Result<ExternalLoadFigures> ParseWrkOutput(std::string_view text) {
  const Output out("wrk", text);
  ExternalLoadFigures f;
  f.tool = "wrk";
  f.unavailable = {"p999_us", "histogram", "per_second", "sent", "status_counts", "errors_parse"};

  // "Latency 1.03ms 2.03ms 17.59ms 87.05%" (avg, stdev, max, within one stdev).
  std::optional<std::string_view> latency;
  BENCHLAB_RETURN_IF_ERROR(out.Find(
      "'Latency' thread-stats",
      [](std::string_view l) {
        auto w = Words(l);
        return !w.empty() && w[0] == "Latency" && (w.size() < 2 || w[1] != "Distribution");
      },
      &latency));
  if (!latency) return out.Missing("'Latency' thread-stats");
  auto lw = Words(*latency);
  std::optional<double> mean, stdev, max;
  if (lw.size() != 5 || !(mean = TimeUs(lw[1])) || !(stdev = TimeUs(lw[2])) ||
      !(max = TimeUs(lw[3]))) {
    return out.Malformed("'Latency' thread-stats", *latency);
  }

  // "74031 requests in 2.02s, 4.94MB read"
  std::optional<std::string_view> total;
  BENCHLAB_RETURN_IF_ERROR(out.Find(
      "'N requests in'",
      [](std::string_view l) {
        auto w = Words(l);
        return w.size() >= 3 && w[1] == "requests" && w[2] == "in";
      },
      &total));
  if (!total) return out.Missing("'N requests in'");
  auto tw = Words(*total);
  std::optional<uint64_t> requests;
  std::optional<double> duration;
  if (tw.size() != 6 || !(requests = Count(tw[0])) || tw[3].back() != ',' ||
      !(duration = TimeUs(tw[3].substr(0, tw[3].size() - 1))) || !Bytes(tw[4]) || tw[5] != "read") {
    return out.Malformed("'N requests in'", *total);
  }
  f.requests = *requests;
  f.duration_s = *duration / 1e6;

  std::optional<std::string_view> rps;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("Requests/sec:", &rps));
  if (!rps) return out.Missing("'Requests/sec:'");
  auto r = Number(TrimSpace(rps->substr(13)));
  if (!r) return out.Malformed("'Requests/sec:'", *rps);
  f.rps = *r;

  std::optional<std::string_view> transfer;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("Transfer/sec:", &transfer));
  if (transfer) {
    f.bytes_per_s = Bytes(TrimSpace(transfer->substr(13)));
    if (!f.bytes_per_s) return out.Malformed("'Transfer/sec:'", *transfer);
  }

  // Printed only when some count is not 0.
  std::optional<std::string_view> socket;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("Socket errors:", &socket));
  if (socket) {
    auto n =
        Expect(LabelledCounts(socket->substr(14), false), {"connect", "read", "write", "timeout"});
    if (!n) return out.Malformed("'Socket errors:'", *socket);
    f.errors_connect = (*n)[0];
    f.errors_read = (*n)[1];
    f.errors_write = (*n)[2];
    f.errors_timeout = (*n)[3];
  }
  std::optional<std::string_view> status;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("Non-2xx or 3xx responses:", &status));
  if (status) {
    auto n = Count(TrimSpace(status->substr(25)));
    if (!n) return out.Malformed("'Non-2xx or 3xx responses:'", *status);
    f.non_2xx_3xx = *n;
  }

  // With --latency: "50% 44.00us", "75% ...", "90% ...", "99% ...".
  std::optional<std::string_view> distribution;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("Latency Distribution", &distribution));
  std::optional<uint64_t> pct[4];
  static constexpr std::string_view kPct[4] = {"50%", "75%", "90%", "99%"};
  if (distribution) {
    for (int i = 0; i < 4; ++i) {
      const std::string_view p = kPct[i];
      std::optional<std::string_view> line;
      BENCHLAB_RETURN_IF_ERROR(out.Find(
          "'" + std::string(p) + "' latency", [p](std::string_view l) { return l.starts_with(p); },
          &line));
      if (!line) return out.Missing("'" + std::string(p) + "' latency");
      auto w = Words(*line);
      std::optional<double> us;
      if (w.size() != 2 || w[0] != p || !(us = TimeUs(w[1]))) {
        return out.Malformed("'" + std::string(p) + "' latency", *line);
      }
      pct[i] = RoundUs(*us);
    }
  } else {
    f.unavailable.insert(f.unavailable.begin(), {"p50_us", "p90_us", "p99_us"});
  }
  if (f.requests > 0) {  // else wrk prints zeros for an empty histogram
    f.mean_us = mean;
    f.stdev_us = stdev;
    f.max_us = max;
    f.p50_us = pct[0];
    f.p75_us = pct[1];
    f.p90_us = pct[2];
    f.p99_us = pct[3];
  }
  return f;
}

Result<ExternalLoadFigures> ParseH2loadOutput(std::string_view text) {
  const Output out("h2load", text);
  ExternalLoadFigures f;
  f.tool = "h2load";
  f.unavailable = {"p50_us",         "p90_us",       "p99_us",       "p999_us",
                   "histogram",      "per_second",   "sent",         "status_counts",
                   "errors_connect", "errors_write", "errors_parse", "errors_timeout"};

  // "finished in 2.00s, 20001.00 req/s, 1.34MB/s"
  std::optional<std::string_view> finished;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("finished in ", &finished));
  if (!finished) return out.Missing("'finished in'");
  auto fw = Words(*finished);
  std::optional<double> duration, rps;
  if (fw.size() != 6 || fw[2].back() != ',' ||
      !(duration = TimeUs(fw[2].substr(0, fw[2].size() - 1))) || !(rps = Number(fw[3])) ||
      fw[4] != "req/s," || !fw[5].ends_with("/s") ||
      !(f.bytes_per_s = Bytes(fw[5].substr(0, fw[5].size() - 2)))) {
    return out.Malformed("'finished in'", *finished);
  }
  f.duration_s = *duration / 1e6;
  f.rps = *rps;

  // "requests: 40002 total, 40006 started, 40002 done, 40002 succeeded, 0 failed, 0 errored,
  // 0 timeout"
  std::optional<std::string_view> requests;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("requests: ", &requests));
  if (!requests) return out.Missing("'requests:'");
  auto n = Expect(LabelledCounts(requests->substr(10), true),
                  {"total", "started", "done", "succeeded", "failed", "errored", "timeout"});
  // Every errored request is also failed, and a timeout is also errored.
  if (!n || (*n)[4] < (*n)[5] || (*n)[5] < (*n)[6]) return out.Malformed("'requests:'", *requests);
  const uint64_t succeeded = (*n)[3], failed = (*n)[4], errored = (*n)[5], timeout = (*n)[6];
  f.requests = succeeded + failed - errored;
  f.failed = failed;
  f.errors_read = errored - timeout;
  f.errors_timeout = timeout;

  // "status codes: 40002 2xx, 0 3xx, 0 4xx, 0 5xx"
  std::optional<std::string_view> status;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("status codes: ", &status));
  if (!status) return out.Missing("'status codes:'");
  auto c = Expect(LabelledCounts(status->substr(14), true), {"2xx", "3xx", "4xx", "5xx"});
  if (!c) return out.Malformed("'status codes:'", *status);
  f.status_classes = {{"2xx", (*c)[0]}, {"3xx", (*c)[1]}, {"4xx", (*c)[2]}, {"5xx", (*c)[3]}};
  f.non_2xx_3xx = (*c)[2] + (*c)[3];

  // "time for request: 16us 32.12ms 199us 1.19ms 98.05%" (min, max, mean, sd, within one sd).
  std::optional<std::string_view> times;
  BENCHLAB_RETURN_IF_ERROR(out.FindPrefix("time for request:", &times));
  if (!times) return out.Missing("'time for request:'");
  auto w = Words(times->substr(17));
  std::optional<double> min, max, mean, sd;
  if (w.size() != 5 || !(min = TimeUs(w[0])) || !(max = TimeUs(w[1])) || !(mean = TimeUs(w[2])) ||
      !(sd = TimeUs(w[3]))) {
    return out.Malformed("'time for request:'", *times);
  }
  if (f.requests > 0) {  // else h2load prints zeros for no samples
    f.min_us = min;
    f.max_us = max;
    f.mean_us = mean;
    f.stdev_us = sd;
  }
  return f;
}

}  // namespace benchlab
