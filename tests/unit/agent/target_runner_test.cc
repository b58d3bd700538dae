#include "agent/target_runner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/conformance.h"
#include "common/parse.h"
#include "tests/unit/support/eventually.h"
#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class TargetRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-target-runner-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  TargetDef Hello() {
    TargetDef def;
    def.name = "hello";
    def.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
    def.campaign_dir = dir_;
    def.ready_timeout = std::chrono::milliseconds(5000);
    return def;
  }

  std::string dir_;
};

TEST_F(TargetRunnerTest, ReadinessIsProbedWhereLoadWillReachTheTarget) {
  // A target listening on 127.0.0.2 only, as a server on a lab host listens on its address.
  TargetDef def = Hello();
  def.name = "only-on-127.0.0.2";
  def.command = {"python3", "-m", "http.server", "--bind", "127.0.0.2", "{port}"};
  def.ready = "/";
  def.ready_timeout = std::chrono::milliseconds(1500);
  StartOptions options;
  options.ready_host = "127.0.0.2";
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/ready-there", options);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_GT(running->startup_ms, 0);
  running->process->Stop(std::chrono::milliseconds(2000));

  // Probed on loopback, where it does not listen: not ready, and the error says where.
  auto elsewhere = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/ready-elsewhere");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(elsewhere.status().message().find("not ready at 127.0.0.1:"), std::string::npos)
      << elsewhere.status().message();
}

TEST(FillPlaceholdersTest, ReplacesEveryKnownPlaceholder) {
  EXPECT_EQ(
      FillPlaceholders("{campaign_dir}/x --port={port} {run_dir}/{port}", 8080, "/run", "/camp"),
      "/camp/x --port=8080 /run/8080");
  EXPECT_EQ(FillPlaceholders("{other} {port", 1, "/r", "/c"), "{other} {port");
  // The certificate files' paths, for a TLS target only.
  EXPECT_EQ(FillPlaceholders("{tls_cert} {tls_key} {tls_ca}", 1, "/run", "/c", /*tls=*/true),
            "/run/tls_cert.pem /run/tls_key.pem /run/tls_ca.pem");
  EXPECT_EQ(FillPlaceholders("{tls_cert}", 1, "/run", "/c"), "{tls_cert}");
}

// nginx with examples/nginx-tls.conf.in: a target with tls = true, as a campaign writes it.
TargetDef NginxTls() {
  TargetDef def;
  def.name = "nginx-tls";
  def.command = {"/usr/sbin/nginx",          "-p", "{run_dir}",  "-c",
                 "{run_dir}/nginx-tls.conf", "-g", "daemon off;"};
  def.templates = {"{campaign_dir}/nginx-tls.conf.in"};
  def.campaign_dir = std::string(BENCHLAB_SOURCE_DIR) + "/examples";
  def.ready_timeout = std::chrono::milliseconds(5000);
  def.tls = true;
  return def;
}

TEST_F(TargetRunnerTest, ATlsTargetGetsItsCertificatesAndIsProbedOverTls) {
  if (!fs::exists("/usr/sbin/nginx")) GTEST_SKIP() << "needs nginx";
  TargetDef def = NginxTls();
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/tls");
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_GT(running->startup_ms, 0);
  EXPECT_EQ(running->tls_ca_pem, ReadAll(dir_ + "/tls/tls_ca.pem"));
  EXPECT_NE(running->tls_ca_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  const std::string conf = ReadAll(dir_ + "/tls/nginx-tls.conf");
  EXPECT_NE(conf.find("ssl_certificate " + dir_ + "/tls/tls_cert.pem;"), std::string::npos) << conf;
  EXPECT_NE(conf.find("ssl_certificate_key " + dir_ + "/tls/tls_key.pem;"), std::string::npos);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/tls/tls_key.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // The conformance check speaks TLS to it, verifying the certificate against the run
  // directory's CA; plain HTTP and another CA's trust both fail, quickly and by name.
  ContractCase hello;
  hello.name = "hello";
  hello.expect_body = "hello\n";
  ContractCase missing;
  missing.name = "missing";
  missing.negative = true;
  missing.request.path = "/nope";
  missing.expect_status = 404;
  const ProbeTls tls{running->tls_ca_pem, "localhost"};
  const auto timeout = std::chrono::milliseconds(2000);
  EXPECT_EQ(CheckContract("127.0.0.1", running->port, {hello, missing}, timeout,
                          LoadOptions::kDefaultMaxBody, &tls),
            std::vector<std::string>{});
  auto plain = CheckContract("127.0.0.1", running->port, {hello}, timeout);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_NE(plain[0].find("status: expected 200, got 400"), std::string::npos) << plain[0];
  TempDir other;
  auto other_ca = MakeTargetTls(other.path(), {});
  ASSERT_TRUE(other_ca.ok());
  const ProbeTls wrong_ca{*other_ca, "localhost"};
  auto refused = CheckContract("127.0.0.1", running->port, {hello}, timeout,
                               LoadOptions::kDefaultMaxBody, &wrong_ca);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find("TLS handshake with 127.0.0.1:" + std::to_string(running->port) +
                            ": certificate refused"),
            std::string::npos)
      << refused[0];
  const ProbeTls wrong_name{running->tls_ca_pem, "example.org"};
  auto misnamed = CheckContract("127.0.0.1", running->port, {hello}, timeout,
                                LoadOptions::kDefaultMaxBody, &wrong_name);
  ASSERT_EQ(misnamed.size(), 1u);
  EXPECT_NE(misnamed[0].find("certificate refused"), std::string::npos) << misnamed[0];
  running->process->Stop(std::chrono::milliseconds(2000));
}

TEST_F(TargetRunnerTest, HelloServerServesHttpsWithTheRunDirectorysCertificate) {
  TargetDef def = Hello();
  def.tls = true;
  def.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server",
                 "--port",
                 "{port}",
                 "--tls-cert",
                 "{tls_cert}",
                 "--tls-key",
                 "{tls_key}"};
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/hello-tls");
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  ContractCase hello;
  hello.name = "hello";
  hello.expect_body = "hello\n";
  ContractCase json;
  json.name = "json";
  json.request.path = "/json";
  json.expect_body = "{\"message\":\"hello\"}\n";
  const ProbeTls tls{running->tls_ca_pem, "localhost"};
  EXPECT_EQ(CheckContract("127.0.0.1", running->port, {hello, json},
                          std::chrono::milliseconds(2000), LoadOptions::kDefaultMaxBody, &tls),
            std::vector<std::string>{});
  // Plain HTTP to it gets no HTTP response at all, only a failed read.
  auto plain = CheckContract("127.0.0.1", running->port, {hello}, std::chrono::milliseconds(500));
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_NE(plain[0].find(" from 127.0.0.1:" + std::to_string(running->port)), std::string::npos)
      << plain[0];
  running->process->Stop(std::chrono::milliseconds(2000));
}

TEST_F(TargetRunnerTest, ATlsTargetThatServesPlainHttpIsNotReadyAndSaysWhy) {
  TargetDef def = Hello();  // plain HTTP, whatever tls says
  def.tls = true;
  def.ready_timeout = std::chrono::milliseconds(1000);
  const auto begin = std::chrono::steady_clock::now();
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/plain");
  const auto took = std::chrono::steady_clock::now() - begin;
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(running.status().message().find("TLS handshake with 127.0.0.1:"), std::string::npos)
      << running.status().message();
  EXPECT_LT(took, std::chrono::seconds(3)) << "the ready timeout and a probe, no more";
}

TEST_F(TargetRunnerTest, TlsPlaceholdersInATemplateNeedTls) {
  std::ofstream(dir_ + "/app.conf.in") << "listen {port}\ncert {tls_cert}\n";
  TargetDef def = Hello();
  def.templates = {"{campaign_dir}/app.conf.in"};
  auto refused = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/no-tls");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "template " + dir_ +
                "/app.conf.in:2: {tls_cert} is filled only for a target with "
                "tls = true, and target \"hello\" has none");
  EXPECT_FALSE(fs::exists(dir_ + "/no-tls/tls_key.pem"));
}

TEST_F(TargetRunnerTest, StartsPinnedInItsOwnGroupAndRendersTemplates) {
  std::ofstream(dir_ + "/app.conf.in") << "listen {port}\nroot {run_dir}\n";
  TargetDef def = Hello();
  def.templates = {"{campaign_dir}/app.conf.in"};
  auto running = LaunchTarget(RealSysEnv(), def, {0}, dir_ + "/run1");
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  pid_t pid = running->process->pid();
  EXPECT_GT(running->port, 0);
  EXPECT_GT(running->startup_ms, 0);
  EXPECT_GT(running->first_request_ms, 0);
  EXPECT_GT(running->idle_rss_kb, 0u);
  EXPECT_EQ(getpgid(pid), pid) << "the target leads its own process group";
  auto cpus = RealSysEnv().GetAffinity(pid);
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, std::vector<int>{0});
  EXPECT_EQ(ReadAll(dir_ + "/run1/app.conf"),
            "listen " + std::to_string(running->port) + "\nroot " + dir_ + "/run1\n");
  ExitInfo info = running->process->Stop(std::chrono::milliseconds(2000));
  EXPECT_TRUE(info.exited);
  EXPECT_NE(kill(pid, 0), 0) << "the target is gone after Stop";
}

TEST_F(TargetRunnerTest, TargetSeesOnlyItsOwnEnvironment) {
  setenv("BENCHLAB_TEST_SECRET", "hunter2", 1);
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c",
                 "env > {run_dir}/env.txt; exec " + std::string(BENCHLAB_BINARY_DIR) +
                     "/bin/hello-server --port $PORT"};
  def.env = {{"MODE", "bench"}};
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/run2");
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  std::string env = ReadAll(dir_ + "/run2/env.txt");
  EXPECT_NE(env.find("MODE=bench\n"), std::string::npos) << env;
  EXPECT_NE(env.find("PORT=" + std::to_string(running->port) + "\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("hunter2"), std::string::npos) << "the agent's environment leaked: " << env;
  running->process->Stop(std::chrono::milliseconds(2000));
  unsetenv("BENCHLAB_TEST_SECRET");
}

TEST_F(TargetRunnerTest, TargetThatExitsBeforeReadyFailsWithItsLog) {
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c", "echo cannot bind port {port} >&2; exit 3"};
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/run3");
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(running.status().message().find("exited before it was ready (exit status 3)"),
            std::string::npos)
      << running.status().message();
  EXPECT_NE(running.status().message().find("cannot bind port"), std::string::npos);
}

TEST_F(TargetRunnerTest, TargetNeverReadyTimesOutAndIsStopped) {
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c", "echo $$ > {run_dir}/pid; exec sleep 30"};
  def.ready_timeout = std::chrono::milliseconds(300);
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/run4");
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(running.status().message().find("not ready at 127.0.0.1:"), std::string::npos)
      << running.status().message();
  pid_t pid = std::atoi(ReadAll(dir_ + "/run4/pid").c_str());
  ASSERT_GT(pid, 0);
  EXPECT_NE(kill(pid, 0), 0) << "a target that never became ready must not be left running";
}

TEST_F(TargetRunnerTest, PinningOutsideTheAllowedCpusIsRefused) {
  StartOptions options;
  options.allowed_cpus = {0};
  auto running = LaunchTarget(RealSysEnv(), Hello(), {1}, dir_ + "/run6", options);
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(running.status().message(),
            "target \"hello\": CPUs 1 are outside this agent's allowed CPUs 0");
  EXPECT_FALSE(fs::exists(dir_ + "/run6/target.log")) << "nothing was started";
}

TEST_F(TargetRunnerTest, UnpinnedTargetIsPinnedToTheAllowedCpus) {
  StartOptions options;
  options.allowed_cpus = {0};
  auto running = LaunchTarget(RealSysEnv(), Hello(), {}, dir_ + "/run7", options);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_EQ(*RealSysEnv().GetAffinity(running->process->pid()), std::vector<int>{0});
  running->process->Stop(std::chrono::milliseconds(2000));
}

TEST_F(TargetRunnerTest, TargetThatRepinsItselfIsCaught) {
  auto own = RealSysEnv().GetAffinity(0);
  ASSERT_TRUE(own.ok());
  if (own->size() < 2) GTEST_SKIP() << "needs two CPUs to re-pin across";
  TargetDef def = Hello();
  // Pinned to CPU 0 by the agent, the shell widens its own affinity after the start-up check
  // and before exec, so only the check after readiness can catch it.
  def.command = {"/bin/sh", "-c",
                 "sleep 0.2; taskset -pc " + FormatCpuList(*own) + " $$ >/dev/null; exec " +
                     std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server --port $PORT"};
  auto running = LaunchTarget(RealSysEnv(), def, {0}, dir_ + "/run8");
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(running.status().message().find("left its CPUs: thread "), std::string::npos)
      << running.status().message();
  EXPECT_NE(running.status().message().find("not only on 0"), std::string::npos);
}

TEST_F(TargetRunnerTest, CookieIsInTheEnvironmentAndTargetsDieWithTheirSpawnThread) {
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c",
                 "env > {run_dir}/env.txt; exec " + std::string(BENCHLAB_BINARY_DIR) +
                     "/bin/hello-server --port $PORT"};
  pid_t pid = 0;
  std::unique_ptr<TargetProcess> leaked;  // destroyed only after the check below
  {
    SpawnThread spawner;
    StartOptions options;
    options.tag_env = {{"BENCHLAB_AGENT", "server:abc"}};
    options.spawner = &spawner;
    auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/run9", options);
    ASSERT_TRUE(running.ok()) << running.status().ToString();
    pid = running->process->pid();
    EXPECT_NE(ReadAll(dir_ + "/run9/env.txt").find("BENCHLAB_AGENT=server:abc\n"),
              std::string::npos);
    leaked.reset(running->process.release());  // as if the agent crashed: nobody stops it
  }
  // The spawn thread is gone, so PR_SET_PDEATHSIG has killed the target.
  EXPECT_TRUE(Eventually([&] {
    waitpid(pid, nullptr, WNOHANG);
    return kill(pid, 0) != 0;
  }));
}

TEST_F(TargetRunnerTest, VersionCommandGivesItsFirstLine) {
  TargetDef def = Hello();
  EXPECT_EQ(*ReadTargetVersion(RealSysEnv(), def, dir_ + "/v"), "unavailable");
  def.version = {"/bin/sh", "-c", "echo hello-server 1.2.3; echo more"};
  auto version = ReadTargetVersion(RealSysEnv(), def, dir_ + "/v");
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, "hello-server 1.2.3");
  // A coloured line, as the coordinator takes it: printable.
  def.version = {"/bin/sh", "-c", "printf '\\033[1mv2\\033[0m\\r\\n'"};
  auto coloured = ReadTargetVersion(RealSysEnv(), def, dir_ + "/v");
  ASSERT_TRUE(coloured.ok()) << coloured.status().ToString();
  EXPECT_EQ(*coloured, "\\x1b[1mv2\\x1b[0m\\r");
  def.version = {"/bin/sh", "-c", "exit 4"};
  auto failed = ReadTargetVersion(RealSysEnv(), def, dir_ + "/v");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("exit status 4"), std::string::npos);
}

TEST_F(TargetRunnerTest, TemplatesComeOnlyFromTheirAllowedDirectories) {
  // The campaign directory and one more; a file beside them, and links out of them.
  fs::create_directories(dir_ + "/campaign");
  fs::create_directories(dir_ + "/config");
  std::ofstream(dir_ + "/campaign/app.conf.in") << "listen {port}\n";
  std::ofstream(dir_ + "/config/extra.conf.in") << "extra\n";
  std::ofstream(dir_ + "/secret") << "not for templates\n";
  fs::create_symlink(dir_ + "/secret", dir_ + "/campaign/link.conf.in");
  TargetDef def = Hello();
  def.campaign_dir = dir_ + "/campaign";
  StartOptions options;
  options.template_dirs = {dir_ + "/config"};
  int run = 0;
  auto start = [&](std::vector<std::string> templates) {
    def.templates = std::move(templates);
    return LaunchTarget(RealSysEnv(), def, {}, dir_ + "/t" + std::to_string(++run), options);
  };

  auto good = start({"{campaign_dir}/app.conf.in", dir_ + "/config/extra.conf.in"});
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_TRUE(fs::exists(dir_ + "/t1/app.conf"));
  EXPECT_TRUE(fs::exists(dir_ + "/t1/extra.conf"));
  good->process->Stop(std::chrono::milliseconds(2000));

  for (const std::string& outside :
       {std::string("{campaign_dir}/../secret"), std::string("{campaign_dir}/link.conf.in"),
        std::string("/etc/passwd")}) {
    auto refused = start({outside});
    ASSERT_FALSE(refused.ok()) << outside;
    EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << outside;
    EXPECT_NE(refused.status().message().find("outside the directories templates may come from"),
              std::string::npos)
        << refused.status().message();
  }
  EXPECT_FALSE(fs::exists(dir_ + "/t2/secret"));
}

TEST_F(TargetRunnerTest, RunDirectoryLogAndRenderedTemplatesArePrivate) {
  std::ofstream(dir_ + "/app.conf.in") << "listen {port}\n";
  TargetDef def = Hello();
  def.templates = {"{campaign_dir}/app.conf.in"};
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/private");
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/private").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir_ + "/private/target.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir_ + "/private/app.conf").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  running->process->Stop(std::chrono::milliseconds(2000));
  EXPECT_FALSE(LaunchTarget(RealSysEnv(), def, {}, dir_ + "/private").ok())
      << "a run directory is never reused";
  // A run root swapped for a link to somewhere else is noticed at the next start.
  fs::create_directory_symlink(dir_, dir_ + "/swapped");
  auto refused = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/swapped/run");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(
      refused.status().message().rfind("run_root " + dir_ + "/swapped: is a symbolic link", 0), 0u)
      << refused.status().message();
}

TEST_F(TargetRunnerTest, ACancelledStartStopsTheTarget) {
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c", "echo $$ > {run_dir}/pid; exec sleep 30"};  // never ready
  def.ready_timeout = std::chrono::milliseconds(30000);
  CancelFlag cancel;
  StartOptions options;
  options.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel.Cancel();
  });
  const auto begin = std::chrono::steady_clock::now();
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/cancelled", options);
  const auto took = std::chrono::steady_clock::now() - begin;
  canceller.join();
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kCancelled) << running.status().ToString();
  EXPECT_LT(took, std::chrono::seconds(2)) << "a readiness probe (500 ms at most) and the stop";
  const pid_t pid = std::stoi(ReadAll(dir_ + "/cancelled/pid"));
  EXPECT_NE(kill(pid, 0), 0) << "nothing is left running";
}

TEST_F(TargetRunnerTest, MissingCommandIsNotFound) {
  TargetDef def = Hello();
  def.command = {"benchlab-no-such-command"};
  auto running = LaunchTarget(RealSysEnv(), def, {}, dir_ + "/run5");
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kNotFound);
  EXPECT_NE(running.status().message().find("starting target \"hello\""), std::string::npos);
}

}  // namespace
}  // namespace benchlab
