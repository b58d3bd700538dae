#include "common/log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "nlohmann/json.hpp"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

// A logger writing into a string, formatted as ConfigureLogging would for `daemon`.
class JsonLines {
 public:
  explicit JsonLines(const std::string& daemon) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    logger_ = std::make_shared<spdlog::logger>("test", sink);
    logger_->set_formatter(std::make_unique<JsonLogFormatter>(daemon));
  }
  spdlog::logger& log() { return *logger_; }
  std::string text() const { return out_.str(); }
  // The only line written, parsed; fails the test when there is not exactly one.
  nlohmann::json Line() const {
    const std::string all = out_.str();
    EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 1) << all;
    return nlohmann::json::parse(all);
  }
  void Clear() { out_.str(""); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> logger_;
};

TEST(LogFormatTest, ParsesTextAndJsonOnly) {
  EXPECT_EQ(ParseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(ParseLogFormat("json"), LogFormat::kJson);
  EXPECT_EQ(ParseLogFormat("JSON"), std::nullopt);
  EXPECT_EQ(ParseLogFormat(""), std::nullopt);
}

TEST(JsonLogFormatterTest, OneObjectALineWithEveryField) {
  JsonLines lines("coordinator");
  lines.log().warn("agent {} lost", "load-1");
  nlohmann::json line = lines.Line();
  EXPECT_EQ(line["level"], "warning");
  EXPECT_EQ(line["daemon"], "coordinator");
  EXPECT_EQ(line["message"], "agent load-1 lost");
  EXPECT_TRUE(line["agent"].is_null());
  EXPECT_TRUE(line["campaign"].is_null());
  EXPECT_TRUE(line["window"].is_null());
  // UTC with milliseconds: 2026-12-02T09:14:03.125Z
  const std::string time = line["time"];
  ASSERT_EQ(time.size(), 24u) << time;
  EXPECT_EQ(time[10], 'T');
  EXPECT_EQ(time[19], '.');
  EXPECT_EQ(time.back(), 'Z');
  // The fields come in the documented order.
  EXPECT_EQ(lines.text().rfind("{\"time\":", 0), 0u) << lines.text();
}

TEST(JsonLogFormatterTest, ContextIsPerThreadAndRestored) {
  JsonLines lines("coordinator");
  {
    ScopedLogContext campaign("hello", "hello-r1-nginx-json-c8");
    lines.log().info("measuring");
    nlohmann::json line = lines.Line();
    EXPECT_EQ(line["campaign"], "hello");
    EXPECT_EQ(line["window"], "hello-r1-nginx-json-c8");
    lines.Clear();
    {
      ScopedLogContext inner("", "hello-r2-nginx-json-c8");  // the campaign stays
      lines.log().info("next");
      line = lines.Line();
      EXPECT_EQ(line["campaign"], "hello");
      EXPECT_EQ(line["window"], "hello-r2-nginx-json-c8");
      lines.Clear();
    }
    lines.log().info("back");
    EXPECT_EQ(lines.Line()["window"], "hello-r1-nginx-json-c8");
    lines.Clear();
    // Another thread has its own (empty) context.
    std::thread([&] { lines.log().info("elsewhere"); }).join();
    EXPECT_TRUE(lines.Line()["campaign"].is_null());
    lines.Clear();
  }
  lines.log().info("done");
  EXPECT_TRUE(lines.Line()["campaign"].is_null());
}

TEST(JsonLogFormatterTest, TheAgentsNameIsProcessWide) {
  JsonLines lines("agent");
  SetLogAgent("server-1");
  std::thread([&] { lines.log().info("from a gRPC thread"); }).join();
  SetLogAgent("");
  EXPECT_EQ(lines.Line()["agent"], "server-1");
}

TEST(JsonLogFormatterTest, TheCoordinatorsLinesAboutAnAgentNameIt) {
  JsonLines lines("coordinator");
  {
    ScopedLogAgent about("server-1");
    lines.log().info("agent server-1 registered");
    EXPECT_EQ(lines.Line()["agent"], "server-1");
    lines.Clear();
    {
      ScopedLogAgent inner("load-1");
      lines.log().info("agent load-1 is back");
      EXPECT_EQ(lines.Line()["agent"], "load-1");
      lines.Clear();
    }
    lines.log().info("back to server-1");
    EXPECT_EQ(lines.Line()["agent"], "server-1");
    lines.Clear();
    // Another thread is about no agent.
    std::thread([&] { lines.log().info("elsewhere"); }).join();
    EXPECT_TRUE(lines.Line()["agent"].is_null());
    lines.Clear();
  }
  lines.log().info("campaign hello done");
  EXPECT_TRUE(lines.Line()["agent"].is_null());
  lines.Clear();
  // An agent process names itself, whatever a line is about.
  SetLogAgent("server-2");
  {
    ScopedLogAgent about("load-1");
    lines.log().info("from the agent");
  }
  SetLogAgent("");
  EXPECT_EQ(lines.Line()["agent"], "server-2");
}

TEST(JsonLogFormatterTest, NewlinesAndInvalidUtf8StayOnOneValidLine) {
  JsonLines lines("agent");
  lines.log().error("target said:\n\"boom\"\t\xff\xfe end");
  nlohmann::json line = lines.Line();  // one line, valid JSON
  const std::string message = line["message"];
  EXPECT_EQ(message.rfind("target said:\n\"boom\"\t", 0), 0u) << message;
  EXPECT_NE(message.find("\xEF\xBF\xBD"), std::string::npos) << message;  // U+FFFD
  EXPECT_NE(message.find(" end"), std::string::npos);
}

TEST(ConfigureLoggingTest, TextEscapesAndJsonStructuresTheDefaultLoggersLines) {
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out)));
  ConfigureLogging(LogFormat::kText, "run");
  spdlog::info("plain");
  EXPECT_EQ(out.str().find('{'), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("[info] plain"), std::string::npos) << out.str();
  out.str("");
  ConfigureLogging(LogFormat::kJson, "run");
  spdlog::info("structured");
  nlohmann::json line = nlohmann::json::parse(out.str());
  EXPECT_EQ(line["daemon"], "run");
  EXPECT_EQ(line["message"], "structured");
  spdlog::set_default_logger(previous);
}

TEST(TextLogFormatterTest, APeersBytesInAMessageStayOnOneLineWithoutControls) {
  std::ostringstream out;
  spdlog::logger logger("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger.set_formatter(std::make_unique<TextLogFormatter>());
  // A request path that tries to forge a second log line and clear the screen.
  logger.warn("http api: GET {}: not found",
              "/x\n[2026-12-01 10:00:00.000] [benchlab] [info] agent evil registered\x1b[2J");
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("[warning] http api: GET /x\\n[2026-12-01 10:00:00.000] [benchlab] [info] "
                      "agent evil registered\\x1b[2J: not found"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace benchlab
