#include "common/log.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>

#include "common/printable.h"
#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

thread_local std::string t_campaign;
thread_local std::string t_window;
thread_local std::string t_agent;  // the agent a line is about (ScopedLogAgent)

std::mutex g_agent_mutex;
std::string g_agent;  // guarded by g_agent_mutex

// The process's own agent name (an agent daemon), else the one this thread's line is about.
std::string AgentName() {
  std::lock_guard<std::mutex> lock(g_agent_mutex);
  return g_agent.empty() ? t_agent : g_agent;
}

nlohmann::json OrNull(const std::string& value) {
  return value.empty() ? nlohmann::json(nullptr) : nlohmann::json(value);
}

// "2026-12-02T09:14:03.125Z"
std::string UtcMillis(spdlog::log_clock::time_point t) {
  const auto since = t.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since - seconds);
  const std::time_t tt = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&tt, &utc);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%03lldZ", static_cast<long long>(millis.count()));
  return buf;
}

}  // namespace

std::optional<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return std::nullopt;
}

ScopedLogContext::ScopedLogContext(std::string campaign, std::string window)
    : saved_campaign_(t_campaign), saved_window_(t_window) {
  if (!campaign.empty()) t_campaign = std::move(campaign);
  if (!window.empty()) t_window = std::move(window);
}

ScopedLogContext::~ScopedLogContext() {
  t_campaign = std::move(saved_campaign_);
  t_window = std::move(saved_window_);
}

ScopedLogAgent::ScopedLogAgent(std::string agent) : saved_agent_(t_agent) {
  if (!agent.empty()) t_agent = std::move(agent);
}

ScopedLogAgent::~ScopedLogAgent() { t_agent = std::move(saved_agent_); }

JsonLogFormatter::JsonLogFormatter(std::string daemon) : daemon_(std::move(daemon)) {}

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
  nlohmann::ordered_json line = {
      {"time", UtcMillis(msg.time)},
      {"level", std::string(level.data(), level.size())},
      {"daemon", daemon_},
      {"agent", OrNull(AgentName())},
      {"campaign", OrNull(t_campaign)},
      {"window", OrNull(t_window)},
      {"message", std::string(msg.payload.data(), msg.payload.size())},
  };
  // Invalid UTF-8 in a message (a target's output quoted in it) is replaced, never thrown on.
  const std::string text =
      line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  dest.append(text.data(), text.data() + text.size());
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>(daemon_);
}

TextLogFormatter::TextLogFormatter() : line_(std::make_unique<spdlog::pattern_formatter>()) {}

void TextLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const std::string message =
      PrintableText(std::string_view(msg.payload.data(), msg.payload.size()));
  spdlog::details::log_msg escaped = msg;
  escaped.payload = spdlog::string_view_t(message.data(), message.size());
  line_->format(escaped, dest);
  // A colour sink reads where the level's colour goes from the message it formatted.
  msg.color_range_start = escaped.color_range_start;
  msg.color_range_end = escaped.color_range_end;
}

std::unique_ptr<spdlog::formatter> TextLogFormatter::clone() const {
  return std::make_unique<TextLogFormatter>();
}

void SetLogAgent(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_agent_mutex);
  g_agent = name;
}

namespace {
std::atomic<LogFormat> configured_format{LogFormat::kText};
}  // namespace

LogFormat ConfiguredLogFormat() { return configured_format.load(); }

void ConfigureLogging(LogFormat format, const std::string& daemon) {
  configured_format.store(format);
  if (format == LogFormat::kJson) {
    spdlog::default_logger()->set_formatter(std::make_unique<JsonLogFormatter>(daemon));
  } else {
    spdlog::default_logger()->set_formatter(std::make_unique<TextLogFormatter>());
  }
}

}  // namespace benchlab
