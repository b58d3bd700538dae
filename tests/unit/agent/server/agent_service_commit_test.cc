// StartTarget with a commit (docs/agent.md, "Builds"): the agent builds that commit of the
// catalogue target's source by its recipe into its build cache and runs the target with {out}
// as the build's output directory. Over real gRPC on loopback, against a git repository made
// here whose commits differ in the file the target serves.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "agent/orphans.h"
#include "agent/server/agent_service.h"
#include "common/git_rev.h"
#include "loadgen/http_client.h"
#include "rpc/status.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kWindow = "window-commit-0123456789";

bool HasText(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// What `command` printed, its trailing newline cut; fails the test when it exits non-zero.
std::string Shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen " << command;
    return out;
  }
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << command << ": " << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class AgentServiceCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-agent-commit-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directory(dir_ + "/run");
    fs::permissions(dir_ + "/run", fs::perms::owner_all);
    // Three commits: reply.txt says "alpha", then "beta", then is gone (its build fails).
    repo_ = dir_ + "/src";
    fs::create_directory(repo_);
    const std::string git = "git -C '" + repo_ + "' -c user.name=t -c user.email=t@example.org ";
    Shell(git + "init -q");
    std::ofstream(repo_ + "/reply.txt") << "alpha\n";
    Shell(git + "add reply.txt && " + git + "commit -q -m alpha && " + git + "tag v-alpha");
    oid_a_ = Shell(git + "rev-parse HEAD");
    std::ofstream(repo_ + "/reply.txt") << "beta\n";
    Shell(git + "commit -q -am beta");
    oid_b_ = Shell(git + "rev-parse HEAD");
    Shell(git + "rm -q reply.txt && " + git + "commit -q -m gone");
    oid_gone_ = Shell(git + "rev-parse HEAD");
    ASSERT_EQ(oid_a_.size(), 40u);
    ASSERT_NE(oid_a_, oid_b_);
  }
  void TearDown() override {
    if (server_) {
      service_->BeginShutdown();
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
      server_->Wait();
    }
    service_.reset();
    fs::remove_all(dir_);
  }

  // Serves its build's output directory: GET /reply.txt answers what the commit's file says.
  TargetDef Site() {
    TargetDef def;
    def.name = "site";
    def.command = {"/usr/bin/python3", "-m",          "http.server", "--bind",
                   "127.0.0.1",        "--directory", "{out}",       "{port}"};
    def.campaign_dir = dir_;
    def.ready_timeout = milliseconds(10000);
    def.recipe.source = repo_;
    def.recipe.build = {{"cp", "{src}/reply.txt", "{out}/reply.txt"}};
    return def;
  }

  TargetDef Hello() {
    TargetDef def;
    def.name = "hello";
    def.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
    def.campaign_dir = dir_;
    def.ready_timeout = milliseconds(5000);
    return def;
  }

  void Serve(std::vector<TargetDef> catalogue) {
    AgentIdentity identity;
    identity.name = "commit-test";
    identity.roles = {"server"};
    identity.run_root = dir_ + "/run";
    identity.cookie = AgentCookie("commit-test", "1");
    identity.limits.max_targets = 2;
    service_ =
        std::make_unique<AgentService>(RealSysEnv(), std::move(identity), std::move(catalogue));
    service_->SetBuildCache(dir_ + "/builds", 1 << 20);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr && port > 0);
    stub_ = v1::Agent::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                   grpc::InsecureChannelCredentials()));
  }

  grpc::Status Start(const std::string& target, const std::string& commit,
                     v1::StartTargetReply* reply) {
    v1::StartTargetRequest req;
    req.set_target(target);
    req.set_window(kWindow);
    req.set_window_label("commit");
    req.set_commit(commit);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return stub_->StartTarget(&ctx, req, reply);
  }

  grpc::Status Stop(const std::string& handle) {
    v1::StopTargetRequest req;
    req.set_handle(handle);
    req.set_window(kWindow);
    req.set_grace_ms(1000);
    v1::StopTargetReply reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return stub_->StopTarget(&ctx, req, &reply);
  }

  // Starts `commit` of "site", reads GET /reply.txt from it and stops it.
  std::string Served(const std::string& commit, std::string* built = nullptr) {
    v1::StartTargetReply reply;
    grpc::Status started = Start("site", commit, &reply);
    EXPECT_TRUE(started.ok()) << started.error_message();
    if (!started.ok()) return "(not started)";
    if (built != nullptr) *built = reply.commit();
    HttpRequest get;
    get.path = "/reply.txt";
    auto response =
        HttpRoundTrip("127.0.0.1", static_cast<uint16_t>(reply.port()), get, milliseconds(5000));
    EXPECT_TRUE(Stop(reply.handle()).ok());
    if (!response.ok()) return response.status().message();
    return std::to_string(response->status) + " " + response->body;
  }

  std::string dir_, repo_, oid_a_, oid_b_, oid_gone_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Agent::Stub> stub_;
};

TEST_F(AgentServiceCommitTest, EachCommitRunsFromItsOwnBuild) {
  Serve({Site()});
  std::string built;
  EXPECT_EQ(Served("v-alpha", &built), "200 alpha\n");
  EXPECT_EQ(built, oid_a_) << "the reply names the commit the tag resolved to";
  EXPECT_EQ(Served(oid_b_.substr(0, 10), &built), "200 beta\n");
  EXPECT_EQ(built, oid_b_);
  // Built once: alpha's entry is found again, not rebuilt, and still serves alpha.
  EXPECT_EQ(Served(oid_a_, &built), "200 alpha\n");
  size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_ + "/builds")) {
    if (fs::exists(entry.path() / "result")) ++entries;
  }
  EXPECT_EQ(entries, 2u);
}

TEST_F(AgentServiceCommitTest, AFailedBuildIsRefusedWithItsReasonEveryTime) {
  Serve({Site()});
  for (int attempt = 0; attempt < 2; ++attempt) {
    v1::StartTargetReply reply;
    grpc::Status refused = Start("site", oid_gone_, &reply);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << attempt;
    EXPECT_EQ(refused.error_message().rfind("build of " + oid_gone_.substr(0, 12) + " failed: ", 0),
              0u)
        << refused.error_message();
    EXPECT_TRUE(HasText(refused.error_message(), "step 1 of 1 (cp")) << refused.error_message();
    // Its mark says the build failed, for the coordinator's "build" step.
    EXPECT_EQ(rpc::HandlerReason(refused), rpc::kBuildFailedReason);
    EXPECT_TRUE(reply.handle().empty());
  }
  EXPECT_TRUE(fs::is_empty(dir_ + "/run")) << "nothing was started";
}

TEST_F(AgentServiceCommitTest, ABadRevisionIsRefusedNamingIt) {
  Serve({Site()});
  v1::StartTargetReply reply;
  grpc::Status malformed = Start("site", "a..b", &reply);
  EXPECT_EQ(malformed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(HasText(malformed.error_message(), "a..b")) << malformed.error_message();

  grpc::Status unknown = Start("site", "no-such-tag", &reply);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(HasText(unknown.error_message(), "\"no-such-tag\" names no commit"))
      << unknown.error_message();
  EXPECT_FALSE(fs::exists(dir_ + "/builds")) << "the cache is opened by the first build";
}

TEST_F(AgentServiceCommitTest, OutWithoutACommitAndACommitWithoutARecipeAreRefused) {
  Serve({Site(), Hello()});
  v1::StartTargetReply reply;
  grpc::Status no_commit = Start("site", "", &reply);
  EXPECT_EQ(no_commit.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(no_commit.error_message(), "target \"site\" uses {out} but no commit was asked for");

  grpc::Status no_recipe = Start("hello", oid_a_, &reply);
  EXPECT_EQ(no_recipe.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(HasText(no_recipe.error_message(), "target \"hello\"") &&
              HasText(no_recipe.error_message(), "has no build recipe"))
      << no_recipe.error_message();
  // Refusals of the same code that are no failed build do not say so.
  EXPECT_EQ(rpc::HandlerReason(no_commit), "");
  EXPECT_EQ(rpc::HandlerReason(no_recipe), "");

  // The same target without a commit runs its catalogue command as before.
  grpc::Status plain = Start("hello", "", &reply);
  ASSERT_TRUE(plain.ok()) << plain.error_message();
  EXPECT_EQ(reply.commit(), "");
  EXPECT_TRUE(Stop(reply.handle()).ok());
}

// ListCommits: the range a coordinator bisects, from the agent's own source; both revisions are
// checked and resolved there, and what cannot be listed is refused naming why.
TEST_F(AgentServiceCommitTest, ListsTheFirstParentRangeFromItsOwnSource) {
  Serve({Site(), Hello()});
  auto list = [&](const std::string& target, const std::string& good, const std::string& bad,
                  int max, v1::ListCommitsReply* reply) {
    v1::ListCommitsRequest req;
    req.set_target(target);
    req.set_good(good);
    req.set_bad(bad);
    req.set_max_commits(max);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return stub_->ListCommits(&ctx, req, reply);
  };
  v1::ListCommitsReply reply;
  grpc::Status listed = list("site", "v-alpha", "HEAD", 4096, &reply);
  ASSERT_TRUE(listed.ok()) << listed.error_message();
  ASSERT_EQ(reply.commits_size(), 3);
  EXPECT_EQ(reply.commits(0).oid(), oid_a_);  // the good end first, resolved
  EXPECT_EQ(reply.commits(0).subject(), "alpha");
  EXPECT_EQ(reply.commits(1).oid(), oid_b_);
  EXPECT_EQ(reply.commits(1).subject(), "beta");
  EXPECT_EQ(reply.commits(2).oid(), oid_gone_);  // the bad end last
  EXPECT_EQ(reply.commits(2).subject(), "gone");

  struct Refusal {
    std::string target, good, bad;
    int max;
    grpc::StatusCode code;
    std::string says;
  };
  for (const Refusal& r : std::vector<Refusal>{
           {"site", "a..b", "HEAD", 4096, grpc::StatusCode::INVALID_ARGUMENT, "good: "},
           {"site", "v-alpha", "-x", 4096, grpc::StatusCode::INVALID_ARGUMENT, "bad: "},
           {"site", "no-such-tag", "HEAD", 4096, grpc::StatusCode::NOT_FOUND,
            "no-such-tag\" names no commit"},
           {"site", "HEAD", "v-alpha", 4096, grpc::StatusCode::FAILED_PRECONDITION,
            "not an ancestor"},
           {"site", "v-alpha", "HEAD", 2, grpc::StatusCode::RESOURCE_EXHAUSTED, "over the limit"},
           {"site", "v-alpha", "HEAD", 4097, grpc::StatusCode::INVALID_ARGUMENT,
            "max_commits: expected 2 to 4096"},
           {"hello", "v-alpha", "HEAD", 4096, grpc::StatusCode::FAILED_PRECONDITION,
            "has no build recipe"},
           {"nginx", "v-alpha", "HEAD", 4096, grpc::StatusCode::NOT_FOUND,
            "has no target \"nginx\""},
       }) {
    v1::ListCommitsReply refused_reply;
    grpc::Status refused = list(r.target, r.good, r.bad, r.max, &refused_reply);
    EXPECT_EQ(refused.error_code(), r.code) << r.says << ": " << refused.error_message();
    EXPECT_TRUE(HasText(refused.error_message(), r.says)) << refused.error_message();
    EXPECT_EQ(refused_reply.commits_size(), 0);
  }
}

// A repository's subjects are its authors' text: backslashes, tabs and control characters are
// escaped and a long one is cut between characters, so that every subject listed passes the
// coordinator's check of the reply (IsListedSubject), and a search is not refused for a subject.
TEST_F(AgentServiceCommitTest, ListedSubjectsAreEscapedAndCutAsTheCoordinatorTakesThem) {
  const std::string git = "git -C '" + repo_ + "' -c user.name=t -c user.email=t@example.org ";
  std::string accents = "x";
  for (int i = 0; i < 150; ++i) accents += "\u00e9";  // byte 256 is inside a character
  for (const std::string& message : {std::string("tab\there back\\slash \x1b[2J"), accents}) {
    std::ofstream(dir_ + "/message") << message << "\n";
    Shell(git + "commit -q --allow-empty --cleanup=verbatim -F '" + dir_ + "/message'");
  }
  Serve({Site()});
  v1::ListCommitsRequest req;
  req.set_target("site");
  req.set_good("v-alpha");
  req.set_bad("HEAD");
  req.set_max_commits(16);
  v1::ListCommitsReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Status listed = stub_->ListCommits(&ctx, req, &reply);
  ASSERT_TRUE(listed.ok()) << listed.error_message();
  ASSERT_EQ(reply.commits_size(), 5);
  EXPECT_EQ(reply.commits(3).subject(), "tab\\there back\\\\slash \\x1b[2J");
  EXPECT_EQ(reply.commits(4).subject(), accents.substr(0, 255));
  for (const auto& c : reply.commits()) EXPECT_TRUE(IsListedSubject(c.subject())) << c.subject();
}

}  // namespace
}  // namespace benchlab
