#include "loadgen/request_mix.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>

#include "loadgen/request.h"

namespace benchlab {

namespace {

using Json = nlohmann::json;

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || std::string_view("()<>@,;:\\\"/[]?={}").find(c) != s.npos) {
      return false;
    }
  }
  return true;
}

bool HasLineBreak(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

// Reads the status expectation of one entry: 201, [200, 204], "2xx" or "200,3xx".
Status ReadExpectStatus(const Json& v, std::vector<int>& out) {
  if (v.is_number_integer()) {
    const int64_t code = v.get<int64_t>();
    if (code < 100 || code > 999) return Status::InvalidArgument("status must be 100-999");
    out = {static_cast<int>(code)};
    return Status::Ok();
  }
  if (v.is_string()) {
    Result<std::vector<int>> codes = ParseStatusList(v.get<std::string>());
    if (!codes.ok()) return codes.status();
    out = *codes;
    return Status::Ok();
  }
  if (v.is_array()) {
    out.clear();
    for (const Json& e : v) {
      std::vector<int> part;
      BENCHLAB_RETURN_IF_ERROR(ReadExpectStatus(e, part));
      out.insert(out.end(), part.begin(), part.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.empty()) return Status::InvalidArgument("expect_status is an empty list");
    return Status::Ok();
  }
  return Status::InvalidArgument("expect_status must be a code, a list or a string like \"2xx\"");
}

Status ReadHeaders(const Json& v, HeaderList& out) {
  auto add = [&out](std::string name, std::string value) -> Status {
    if (!IsToken(name) || HasLineBreak(value)) {
      return Status::InvalidArgument("bad header \"" + name + ": " + value + "\"");
    }
    out.emplace_back(std::move(name), std::move(value));
    return Status::Ok();
  };
  if (v.is_object()) {
    for (const auto& [name, value] : v.items()) {
      if (!value.is_string()) return Status::InvalidArgument("header values must be strings");
      BENCHLAB_RETURN_IF_ERROR(add(name, value.get<std::string>()));
    }
    return Status::Ok();
  }
  if (v.is_array()) {
    for (const Json& e : v) {
      if (!e.is_string()) return Status::InvalidArgument("headers must be \"Name: value\" strings");
      const std::string line = e.get<std::string>();
      const size_t colon = line.find(':');
      if (colon == std::string::npos) {
        return Status::InvalidArgument("expected \"Name: value\", got \"" + line + "\"");
      }
      BENCHLAB_RETURN_IF_ERROR(
          add(std::string(TrimView(std::string_view(line).substr(0, colon))),
              std::string(TrimView(std::string_view(line).substr(colon + 1)))));
    }
    return Status::Ok();
  }
  return Status::InvalidArgument("headers must be an object or a list of \"Name: value\"");
}

Status ReadEntry(const Json& j, MixRequest& r) {
  if (!j.is_object()) return Status::InvalidArgument("each line must be a JSON object");
  for (const auto& [key, v] : j.items()) {
    if (key == "weight") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
          v.get<int64_t>() > static_cast<int64_t>(kMaxMixWeightSum)) {
        return Status::InvalidArgument("weight must be an integer from 1 to " +
                                       std::to_string(kMaxMixWeightSum) + ", got " + v.dump());
      }
      r.weight = static_cast<uint32_t>(v.get<int64_t>());
    } else if (key == "method") {
      if (!v.is_string() || !IsToken(v.get<std::string>())) {
        return Status::InvalidArgument("method must be one word such as \"GET\", got " + v.dump());
      }
      r.method = v.get<std::string>();
    } else if (key == "path") {
      if (!v.is_string() || v.get<std::string>().empty() ||
          v.get<std::string>().find_first_of(" \t\r\n") != std::string::npos) {
        return Status::InvalidArgument("path must be non-empty without spaces, got " + v.dump());
      }
      r.path = v.get<std::string>();
    } else if (key == "headers") {
      BENCHLAB_RETURN_IF_ERROR(ReadHeaders(v, r.headers));
    } else if (key == "body") {
      if (!v.is_string()) return Status::InvalidArgument("body must be a string");
      r.body = v.get<std::string>();
    } else if (key == "expect_status") {
      BENCHLAB_RETURN_IF_ERROR(ReadExpectStatus(v, r.expect_status));
    } else if (key == "expect_body") {
      if (!v.is_string()) return Status::InvalidArgument("expect_body must be a string");
      r.expect_body = v.get<std::string>();
    } else {
      return Status::InvalidArgument(
          "unknown key \"" + key +
          "\" (expected weight, method, path, headers, body, expect_status, expect_body)");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<MixRequest>> ParseRequestMix(std::string_view text, std::string_view origin) {
  std::vector<MixRequest> mix;
  uint64_t weight_sum = 0;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    const std::string_view line = TrimView(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = std::string(origin) + ":" + std::to_string(line_no) + ": ";
    // Configuration parsing may throw; the exception stops here and becomes a Status.
    const Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::InvalidArgument(where + "not a JSON object");
    MixRequest r;
    try {
      if (Status st = ReadEntry(j, r); !st.ok()) {
        return Status::InvalidArgument(where + st.message());
      }
    } catch (const Json::exception& e) {
      return Status::InvalidArgument(where + e.what());
    }
    BENCHLAB_RETURN_IF_ERROR(
        CheckRequestParts(where.substr(0, where.size() - 2), r.method, r.path, r.headers));
    weight_sum += r.weight;
    if (weight_sum > kMaxMixWeightSum) {
      return Status::InvalidArgument(where + "the weights add up to more than " +
                                     std::to_string(kMaxMixWeightSum));
    }
    mix.push_back(std::move(r));
  }
  if (mix.empty()) {
    return Status::InvalidArgument(std::string(origin) + ": no requests (one JSON object a line)");
  }
  return mix;
}

std::vector<uint32_t> WeightedCycle(const std::vector<uint32_t>& weights) {
  uint64_t total = 0;
  for (uint32_t w : weights) total += w;
  std::vector<uint32_t> cycle;
  cycle.reserve(static_cast<size_t>(total));
  std::vector<int64_t> current(weights.size(), 0);
  for (uint64_t step = 0; step < total; ++step) {
    size_t best = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
      current[i] += weights[i];
      if (current[i] > current[best]) best = i;
    }
    current[best] -= static_cast<int64_t>(total);
    cycle.push_back(static_cast<uint32_t>(best));
  }
  return cycle;
}

Result<std::vector<int>> ParseStatusList(std::string_view text) {
  std::vector<int> codes;
  auto bad = [&](std::string_view part) {
    return Status::InvalidArgument(
        "expected status codes such as \"200\", \"2xx\" or "
        "\"200-299,404\", got \"" +
        std::string(part) + "\" in \"" + std::string(text) + "\"");
  };
  auto number = [](std::string_view s, int& out) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && out >= 100 && out <= 999;
  };
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view part = TrimView(rest.substr(0, comma));
    int lo = 0, hi = 0;
    if (part.size() == 3 && part[0] >= '1' && part[0] <= '9' && (part[1] | 0x20) == 'x' &&
        (part[2] | 0x20) == 'x') {
      lo = (part[0] - '0') * 100;
      hi = lo + 99;
    } else if (const size_t dash = part.find('-'); dash != std::string_view::npos) {
      if (!number(part.substr(0, dash), lo) || !number(part.substr(dash + 1), hi) || hi < lo) {
        return bad(part);
      }
    } else if (number(part, lo)) {
      hi = lo;
    } else {
      return bad(part);
    }
    for (int c = lo; c <= hi; ++c) codes.push_back(c);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  return codes;
}

}  // namespace benchlab
