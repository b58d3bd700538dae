// Response bodies are bounded by max_body: a local server streams a 600 MB body (generated as
// it is sent) in each framing to the load engine and to the one-shot client; the response counts
// as body_too_large / fails with a clear error, and the test process's resident memory (sampled
// during the run, and its peak) stays within kFlat of where it began. Without a limit the engine
// reads the whole 600 MB, still without growing.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "loadgen/http_client.h"
#include "loadgen/load.h"
#include "tests/sanitizer.h"
#include "tests/unit/loadgen/engine_param.h"
#include "tests/unit/loadgen/raw_http_server.h"
#include "tests/unit/loadgen/rss_sampler.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Framing = RawHttpServer::Framing;

constexpr uint64_t kHugeBody = 600ull << 20;
// Far below the body, far above the 16 MiB limit (5x under ThreadSanitizer, whose shadow memory
// counts in RSS: still far below the body's 600 MB, and the shadow memory it would take).
constexpr uint64_t kFlat = (64ull << 20) * kSanitizerMemoryScale;

RawHttpServer::Responder Huge(Framing framing) {
  return [framing](RawHttpServer& server, int fd) {
    return server.StreamBody(fd, framing, kHugeBody) && framing != Framing::kClose;
  };
}

const char* Name(Framing f) {
  return f == Framing::kContentLength ? "Content-Length"
         : f == Framing::kChunked     ? "chunked"
                                      : "close";
}

class BodyLimitTest : public EngineParamTest {
 protected:
  LoadOptions Options(uint16_t port) const {
    LoadOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    o.connections = 1;
    o.duration = 500ms;
    o.timeout = 10s;
    o.engine = GetParam();
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(Engines, BodyLimitTest, kEngines, EngineParamName);

TEST_P(BodyLimitTest, EngineCountsBodyTooLargeAndStaysFlat) {
  for (Framing framing : {Framing::kContentLength, Framing::kChunked, Framing::kClose}) {
    SCOPED_TRACE(Name(framing));
    RawHttpServer server(Huge(framing));
    ASSERT_TRUE(server.ok());
    RssSampler rss;
    Result<LoadResult> r = GenerateLoad(Options(server.port()));
    rss.Stop();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->requests, 0u);
    EXPECT_GE(r->errors.body_too_large, 1u);
    EXPECT_EQ(r->errors.parse, 0u);
    EXPECT_EQ(r->sent, r->requests + r->errors.Failed());
    // Closed and reopened like after other errors: one connection per response cut off.
    EXPECT_GE(server.accepted(), r->errors.body_too_large);
    EXPECT_LT(rss.peak(), rss.baseline() + kFlat)
        << "baseline " << rss.baseline() << ", peak " << rss.peak();
  }
}

TEST_P(BodyLimitTest, EngineReadsAHugeBodyWithoutGrowingWhenUnlimited) {
  // The whole 600 MB goes through the parser (and the expect-body comparison) with no limit.
  RawHttpServer server(Huge(Framing::kChunked));
  ASSERT_TRUE(server.ok());
  LoadOptions o = Options(server.port());
  o.max_body = 0;
  o.duration = 100ms;  // one request of the interval; the drain waits for its whole body
  o.expect_body = std::string(16, 'x');
  RssSampler rss;
  Result<LoadResult> r = GenerateLoad(o);
  rss.Stop();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 1u);
  EXPECT_EQ(r->errors.mismatch, 1u);  // 600 MB of 'x' is not 16 bytes of it
  EXPECT_EQ(r->errors.body_too_large, 0u);
  EXPECT_GT(r->bytes_read, kHugeBody);
  EXPECT_GT(server.bytes_sent(), kHugeBody);
  EXPECT_LT(rss.peak(), rss.baseline() + kFlat)
      << "baseline " << rss.baseline() << ", peak " << rss.peak();
}

TEST_P(BodyLimitTest, EngineLimitIsConfigurable) {
  RawHttpServer server(
      [](RawHttpServer& s, int fd) { return s.StreamBody(fd, Framing::kContentLength, 1000); });
  ASSERT_TRUE(server.ok());
  LoadOptions o = Options(server.port());
  o.duration = 200ms;
  o.max_body = 1000;
  Result<LoadResult> fits = GenerateLoad(o);
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_GT(fits->requests, 0u);
  EXPECT_EQ(fits->errors.body_too_large, 0u);
  o.max_body = 999;
  Result<LoadResult> over = GenerateLoad(o);
  ASSERT_TRUE(over.ok()) << over.status().ToString();
  EXPECT_EQ(over->requests, 0u);
  EXPECT_GT(over->errors.body_too_large, 0u);
}

TEST(ClientBodyLimitTest, RefusesAHugeBodyWithAClearError) {
  for (Framing framing : {Framing::kContentLength, Framing::kChunked, Framing::kClose}) {
    SCOPED_TRACE(Name(framing));
    RawHttpServer server(Huge(framing));
    ASSERT_TRUE(server.ok());
    RssSampler rss;
    Result<HttpResponse> r = HttpRoundTrip("127.0.0.1", server.port(), HttpRequest{}, 10000ms);
    rss.Stop();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(r.status().message().find("response body larger than 16 MiB"), std::string::npos)
        << r.status().message();
    EXPECT_LT(rss.peak(), rss.baseline() + kFlat)
        << "baseline " << rss.baseline() << ", peak " << rss.peak();
  }
}

TEST(ClientBodyLimitTest, LimitIsAParameter) {
  RawHttpServer server([](RawHttpServer& s, int fd) {
    s.StreamBody(fd, Framing::kClose, 2048);
    return false;
  });
  ASSERT_TRUE(server.ok());
  Result<HttpResponse> fits =
      HttpRoundTrip("127.0.0.1", server.port(), HttpRequest{}, 2000ms, 2048);
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ(fits->body.size(), 2048u);
  Result<HttpResponse> over =
      HttpRoundTrip("127.0.0.1", server.port(), HttpRequest{}, 2000ms, 2047);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("response body larger than 2047 bytes"), std::string::npos)
      << over.status().message();
}

}  // namespace
}  // namespace benchlab
