#include "agent/services.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/private_dir.h"
#include "agent/target_runner.h"
#include "common/parse.h"

namespace benchlab {

// The user a run_as service runs as; uid -1: the agent's own. A member of Instance, below, so
// outside the anonymous namespace (GCC's -Wsubobject-linkage in a unity batch).
namespace services_internal {
struct RunAs {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::string name;
  bool other() const { return uid != static_cast<uid_t>(-1); }
};
}  // namespace services_internal
using services_internal::RunAs;

namespace {

namespace fs = std::filesystem;
using Ms = std::chrono::duration<double, std::milli>;

bool TcpAccepts(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

Result<RunAs> ResolveRunAs(const ServiceDef& def) {
  RunAs out;
  // An agent that is not root could not change user, and its services are not root's: they run
  // as the agent does, so one campaign file serves both.
  if (def.run_as.empty() || geteuid() != 0) return out;
  const std::string what = "service \"" + def.name + "\": run_as \"" + def.run_as + "\"";
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  const int err = getpwnam_r(def.run_as.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr) {
    return Status::NotFound(
        what + ": " + (err != 0 ? std::string(std::strerror(err)) : "no such user on this host"));
  }
  if (entry.pw_uid == geteuid()) return out;  // root itself: nothing to change
  out.uid = entry.pw_uid;
  out.gid = entry.pw_gid;
  out.name = def.run_as;
  return out;
}

// Can `who` enter every directory from / down to `dir`? The first that it cannot, with why.
Status Reachable(const std::string& dir, const RunAs& who, const std::string& what) {
  fs::path walked = "/";
  for (const auto& part : fs::path(dir).relative_path()) {
    walked /= part;
    struct stat st {};
    if (stat(walked.c_str(), &st) != 0) {
      return Status::NotFound(what + ": " + walked.string() + ": " + std::strerror(errno));
    }
    const mode_t bit = st.st_uid == who.uid ? S_IXUSR : st.st_gid == who.gid ? S_IXGRP : S_IXOTH;
    if (!S_ISDIR(st.st_mode) || (st.st_mode & bit) == 0) {
      char mode[8];
      std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return Status::FailedPrecondition(
          what + ": user " + who.name + " cannot enter " + walked.string() + " (mode " + mode +
          ", owner uid " + std::to_string(st.st_uid) +
          "); set service_dir in the agent's configuration to a directory it can reach "
          "(docs/services.md, \"Running as another user\")");
    }
  }
  return Status::Ok();
}

// Removes a run_as service's directory with that user's rights alone, so that nothing the
// service left there (a symbolic link, a hard link) can make the agent delete what is not its.
void RemoveAs(SysEnv& env, const RunAs& who, const std::string& dir, const std::string& log) {
  SpawnSpec spec;
  spec.argv = {"rm", "-rf", "--", dir};
  spec.cwd = "/";
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.log_path = log;
  spec.uid = who.uid;
  spec.gid = who.gid;
  auto spawned = TargetProcess::Spawn(env, spec);
  ExitInfo exit;
  if (!spawned.ok()) {
    spdlog::warn("removing {}: {}", dir, spawned.status().message());
  } else if (!(*spawned)->WaitExit(std::chrono::steady_clock::now() + std::chrono::seconds(60),
                                   &exit)) {
    (*spawned)->Stop(std::chrono::milliseconds(0));
    spdlog::warn("removing {}: rm did not finish within 60 s", dir);
  } else if (exit.exit_code != 0) {
    spdlog::warn("removing {}: rm: {}; {}", dir, exit.Describe(),
                 JoinLines((*spawned)->LastLogLines(3)));
  }
}

}  // namespace

Result<double> ParseProbeOutput(const std::string& text) {
  const std::string trimmed(TrimSpace(text));
  const std::string shown = trimmed.size() > 80 ? trimmed.substr(0, 80) + "..." : trimmed;
  if (trimmed.empty()) return Status::InvalidArgument("printed nothing, expected one number");
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(trimmed.c_str(), &end);
  if (end != trimmed.c_str() + trimmed.size() || errno == ERANGE || !std::isfinite(value) ||
      trimmed.find_first_of("xXnN") != std::string::npos) {
    return Status::InvalidArgument("printed \"" + shown + "\", expected one number");
  }
  return value;
}

TargetDef WithServiceEndpoints(const TargetDef& def, const std::vector<ServiceEndpoint>& services) {
  TargetDef out = def;
  auto fill = [&](std::string& text) {
    for (const ServiceEndpoint& s : services) {
      ReplaceAll(text, "{service." + s.name + ".port}", std::to_string(s.port));
      ReplaceAll(text, "{service." + s.name + ".host}", s.host);
      ReplaceAll(text, "{service." + s.name + ".run_dir}", s.run_dir);
    }
  };
  for (auto& arg : out.command) fill(arg);
  fill(out.cwd);
  for (auto& [name, value] : out.env) fill(value);
  return out;
}

// One running instance of a service. The cgroup is declared first so that it goes last: the
// process is stopped before its cgroup is removed.
struct ServiceManager::Instance {
  ~Instance();
  const ServiceDef* def = nullptr;
  std::unique_ptr<WindowCgroup> cgroup;
  std::string cgroup_note;
  std::unique_ptr<TargetProcess> process;
  std::string run_dir;   // private to the agent: logs, the sql it runs
  std::string work_dir;  // {run_dir} and the working directory: run_dir, or a run_as user's own
  RunAs run_as;          // -1: the agent's own user
  SysEnv* env = nullptr;
  uint16_t port = 0;
  std::vector<int> cpus;
  ServiceWindow started_for;   // the window that started it
  std::string reset_campaign;  // the campaign and round of its last reset
  int reset_round = 0;
  std::chrono::steady_clock::time_point last_used;
  size_t in_use = 0;       // windows preparing or measuring with it
  std::mutex interval_mu;  // one interval's probes at a time
};

ServiceManager::Instance::~Instance() {
  process.reset();  // stopped (TargetProcess's destructor) before its directory goes
  if (run_as.other() && !work_dir.empty()) {
    RemoveAs(*env, run_as, work_dir, (fs::path(run_dir) / "cleanup.out").string());
  }
}

struct ServiceManager::Interval::One {
  std::shared_ptr<Instance> instance;
  std::unique_ptr<IntervalSampler> sampler;
  Status begun;
};

ServiceManager::ServiceManager(SysEnv& env, std::vector<ServiceDef> services,
                               ServiceOptions options, Clock& clock)
    : env_(env), clock_(clock), defs_(std::move(services)), options_(std::move(options)) {}

ServiceManager::~ServiceManager() { StopAll(); }

const ServiceDef* ServiceManager::Find(const std::string& name) const {
  for (const auto& def : defs_) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

Result<std::shared_ptr<ServiceManager::Instance>> ServiceManager::Start(
    const ServiceDef& def, const ServiceWindow& window) {
  const std::string what = "service \"" + def.name + "\"";
  auto pinned_cpus = PinnedCpus(what, def.cpus, options_.allowed_cpus);
  if (!pinned_cpus.ok()) return pinned_cpus.status();
  const std::vector<int>& pinned = *pinned_cpus;
  BENCHLAB_RETURN_IF_ERROR(EnsurePrivateDir("run_root", options_.run_root));
  auto run_as = ResolveRunAs(def);
  if (!run_as.ok()) return run_as.status();
  auto instance = std::make_shared<Instance>();
  instance->def = &def;
  instance->env = &env_;
  instance->started_for = window;
  const std::string label =
      "service-" + def.name + "-" + std::to_string(getpid()) + "-" + std::to_string(next_run_++);
  instance->run_dir = (fs::path(options_.run_root) / label).string();
  if (Status made = MakePrivateDir(instance->run_dir); !made.ok()) {
    return Status(made.code(), what + ": run directory: " + made.message());
  }
  instance->work_dir = instance->run_dir;
  if (run_as->other()) {
    // The agent's run_root is its own (0700): the service's directory is made in service_dir,
    // with a name no one can guess, then given to the user.
    BENCHLAB_RETURN_IF_ERROR(Reachable(options_.service_dir, *run_as, what));
    std::string pattern = (fs::path(options_.service_dir) / ("benchlab-" + label + "-XXXXXX"));
    if (mkdtemp(pattern.data()) == nullptr) {
      return Status::IoError(what + ": " + pattern + ": " + std::strerror(errno));
    }
    if (chown(pattern.c_str(), run_as->uid, run_as->gid) != 0) {
      const std::string error = std::strerror(errno);
      rmdir(pattern.c_str());
      return Status::IoError(what + ": chown " + pattern + " to " + run_as->name + ": " + error);
    }
    instance->work_dir = pattern;
    instance->run_as = *run_as;  // from here on, the directory goes with the instance
  }
  auto port = ResolvePort(def.port);
  if (!port.ok()) return port.status();
  instance->port = *port;
  SpawnSpec spec;
  for (const auto& arg : def.command) {
    spec.argv.push_back(
        FillPlaceholders(arg, instance->port, instance->work_dir, def.campaign_dir));
  }
  spec.cwd = instance->work_dir;
  spec.uid = instance->run_as.uid;
  spec.gid = instance->run_as.gid;
  spec.env = def.env;
  spec.env.insert(options_.tag_env.begin(), options_.tag_env.end());
  spec.env["PORT"] = std::to_string(instance->port);
  spec.cpus = pinned;
  spec.log_path = (fs::path(instance->run_dir) / "service.log").string();
  const auto spawn_start = std::chrono::steady_clock::now();
  auto launched = LaunchInCgroup(env_, spec, options_.use_cgroup, label, options_.cgroup_parent,
                                 options_.spawner);
  if (!launched.ok()) {
    return Status(launched.status().code(),
                  "starting " + what + ": " + launched.status().message());
  }
  instance->cgroup = std::move(launched->cgroup);
  instance->cgroup_note = std::move(launched->cgroup_note);
  instance->process = std::move(launched->process);
  instance->cpus = pinned;

  // Readiness: the ready command exits 0, or the port accepts a connection.
  const auto deadline = spawn_start + def.ready_timeout;
  std::string last = "no answer yet";
  while (true) {
    ExitInfo exit;
    if (instance->process->Exited(&exit)) {
      return Status::FailedPrecondition(
          what + " exited before it was ready (" + exit.Describe() +
          "); last log lines: " + JoinLines(instance->process->LastLogLines(5)));
    }
    bool ready = false;
    if (def.ready_command.empty()) {
      ready = TcpAccepts(instance->port);
      if (!ready) last = "127.0.0.1:" + std::to_string(instance->port) + " refused";
    } else {
      auto ran = RunFor(*instance, def.ready_command, "", "ready_command",
                        std::chrono::milliseconds(5000));
      ready = ran.ok();
      if (!ran.ok()) last = ran.status().message();
    }
    if (ready) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      instance->process->Stop(options_.stop_grace);
      return Status::DeadlineExceeded(
          what + " not ready within " + std::to_string(def.ready_timeout.count()) + "ms (" + last +
          "); last log lines: " + JoinLines(instance->process->LastLogLines(5)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto ready_at = std::chrono::steady_clock::now();
  for (size_t i = 0; i < def.setup.size(); ++i) {
    auto ran =
        RunFor(*instance, def.setup[i], "", "setup[" + std::to_string(i) + "]", def.setup_timeout);
    if (!ran.ok()) {
      instance->process->Stop(options_.stop_grace);
      return ran.status();
    }
  }
  const auto set_up = std::chrono::steady_clock::now();
  spdlog::info(
      "started service {} (pid {}, port {}, cpus {}, ready in {:.1f} ms, setup {:.1f} ms, "
      "{})",
      def.name, instance->process->pid(), instance->port, FormatCpuList(pinned),
      Ms(ready_at - spawn_start).count(), Ms(set_up - ready_at).count(),
      instance->cgroup ? "in cgroup " + instance->cgroup->path()
                       : "no cgroup: " + instance->cgroup_note);
  return instance;
}

Result<std::string> ServiceManager::RunFor(Instance& instance, const std::vector<std::string>& argv,
                                           const std::string& sql, const std::string& what,
                                           std::chrono::milliseconds timeout) {
  const ServiceDef& def = *instance.def;
  const std::string who = "service \"" + def.name + "\" " + what;
  SpawnSpec spec;
  if (!sql.empty()) {
    // As a script on psql's standard input, so that each statement runs on its own (VACUUM
    // refuses a multi-statement -c); the agent opens it, so a run_as user need not read it.
    const std::string file = (fs::path(instance.run_dir) / "command.sql").string();
    BENCHLAB_RETURN_IF_ERROR(WritePrivateFile(file, sql + "\n"));
    spec.stdin_path = file;
    spec.argv = {options_.psql,
                 "-X",
                 "-q",
                 "-A",
                 "-t",
                 "-v",
                 "ON_ERROR_STOP=1",
                 "-h",
                 "127.0.0.1",
                 "-p",
                 std::to_string(instance.port),
                 "-U",
                 def.user,
                 "-d",
                 def.database,
                 "-f",
                 "-"};
  } else {
    for (const auto& arg : argv) {
      spec.argv.push_back(
          FillPlaceholders(arg, instance.port, instance.work_dir, def.campaign_dir));
    }
  }
  spec.cwd = instance.work_dir;
  spec.uid = instance.run_as.uid;
  spec.gid = instance.run_as.gid;
  spec.env = def.env;
  spec.env.insert(options_.tag_env.begin(), options_.tag_env.end());
  spec.env["PORT"] = std::to_string(instance.port);
  if (!spec.env.contains("PATH")) {
    const char* path = std::getenv("PATH");
    spec.env["PATH"] = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  }
  spec.cpus = instance.cpus;
  spec.log_path = (fs::path(instance.run_dir) / "command.out").string();
  spec.die_with_parent = options_.spawner != nullptr;
  auto spawned = SpawnFrom(env_, spec, options_.spawner);
  if (!spawned.ok())
    return Status(spawned.status().code(), who + ": " + spawned.status().message());
  ExitInfo exit;
  if (!(*spawned)->WaitExit(std::chrono::steady_clock::now() + timeout, &exit)) {
    (*spawned)->Stop(std::chrono::milliseconds(500));
    return Status::DeadlineExceeded(who + " did not finish within " +
                                    std::to_string(timeout.count()) + "ms");
  }
  std::ifstream in(spec.log_path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (exit.exit_code != 0) {
    return Status::FailedPrecondition(who + ": " + exit.Describe() +
                                      "; output: " + JoinLines((*spawned)->LastLogLines(3)));
  }
  return text.str();
}

Status ServiceManager::RunReset(Instance& instance) {
  const ServiceDef& def = *instance.def;
  auto ran = RunFor(instance, def.reset_command, def.reset_sql, "reset", def.setup_timeout);
  return ran.ok() ? Status::Ok() : ran.status();
}

Result<Prepared> ServiceManager::Prepare(const std::vector<std::string>& names,
                                         const ServiceWindow& window) {
  Prepared out;
  std::lock_guard lock(mu_);
  for (const std::string& name : names) {
    const ServiceDef* def = Find(name);
    if (def == nullptr) {
      return Status::NotFound("this agent has no service \"" + name + "\" in its configuration");
    }
    std::shared_ptr<Instance>& slot = running_[name];
    if (slot) {
      const ServiceWindow& was = slot->started_for;
      bool keep = slot->process && !slot->process->Exited();
      if (keep && was.campaign != window.campaign) {
        if (slot->in_use > 0) {
          return Status::FailedPrecondition("service \"" + name + "\" is serving campaign \"" +
                                            was.campaign + "\" now");
        }
        keep = false;
      }
      if (keep && def->scope == ServiceScope::kTarget && was.target != window.target) keep = false;
      if (keep && def->scope == ServiceScope::kWindow) keep = false;
      if (!keep) {
        ExitInfo info = slot->process->Stop(options_.stop_grace);
        spdlog::info("stopped service {}: {}", name, info.Describe());
        slot.reset();
      }
    }
    ServiceStartInfo start;
    start.name = name;
    if (!slot) {
      const auto began = std::chrono::steady_clock::now();
      auto started = Start(*def, window);
      if (!started.ok()) {
        running_.erase(name);
        return started.status();
      }
      slot = std::move(started).value();
      start.started = true;
      start.startup_ms = Ms(std::chrono::steady_clock::now() - began).count();
    }
    out.starts.push_back(start);
    if (def->has_reset() &&
        (def->reset_every == ResetEvery::kWindow || slot->reset_campaign != window.campaign ||
         slot->reset_round != window.round)) {
      const auto began = std::chrono::steady_clock::now();
      Status reset = RunReset(*slot);
      if (!reset.ok()) return reset;
      slot->reset_campaign = window.campaign;
      slot->reset_round = window.round;
      out.resets.push_back({name, Ms(std::chrono::steady_clock::now() - began).count()});
    }
    slot->started_for.window = window.window;
    slot->last_used = clock_.Now();
    out.endpoints.push_back({name, slot->port, "127.0.0.1", slot->work_dir});
  }
  return out;
}

void ServiceManager::Release(const std::string& window) {
  std::lock_guard lock(mu_);
  for (auto it = running_.begin(); it != running_.end();) {
    Instance& instance = *it->second;
    if (instance.def->scope == ServiceScope::kWindow && instance.started_for.window == window) {
      ExitInfo info = instance.process->Stop(options_.stop_grace);
      spdlog::info("stopped service {} with its window: {}", it->first, info.Describe());
      it = running_.erase(it);
    } else {
      instance.last_used = clock_.Now();
      ++it;
    }
  }
}

size_t ServiceManager::StopOthers(const std::string& campaign) {
  std::lock_guard lock(mu_);
  size_t stopped = 0;
  for (auto it = running_.begin(); it != running_.end();) {
    if (!campaign.empty() && it->second->started_for.campaign == campaign) {
      ++it;
      continue;
    }
    ExitInfo info = it->second->process->Stop(options_.stop_grace);
    spdlog::info("stopped service {}: {}", it->first, info.Describe());
    it = running_.erase(it);
    ++stopped;
  }
  return stopped;
}

ServiceManager::Ended ServiceManager::StopCampaign(const std::string& campaign) {
  Ended ended;
  std::vector<std::pair<std::string, std::shared_ptr<Instance>>> stopping;
  {
    std::lock_guard lock(mu_);
    for (auto it = running_.begin(); it != running_.end();) {
      if (campaign.empty() || it->second->started_for.campaign != campaign) {
        ++it;
      } else if (it->second->in_use > 0) {
        ++ended.in_use;
        ++it;
      } else {
        stopping.emplace_back(it->first, std::move(it->second));
        it = running_.erase(it);
      }
    }
  }
  // Outside the lock: another campaign's windows need not wait for these to stop.
  for (auto& [name, instance] : stopping) {
    ExitInfo info = instance->process->Stop(options_.stop_grace);
    spdlog::info("stopped service {}, its campaign ended: {}", name, info.Describe());
    instance.reset();  // its directory goes once no interval holds it
    ++ended.stopped;
  }
  return ended;
}

size_t ServiceManager::StopIdle(std::chrono::steady_clock::duration idle) {
  std::lock_guard lock(mu_);
  size_t stopped = 0;
  const auto now = clock_.Now();
  for (auto it = running_.begin(); it != running_.end();) {
    if (it->second->in_use > 0 || now - it->second->last_used < idle) {
      ++it;
      continue;
    }
    ExitInfo info = it->second->process->Stop(options_.stop_grace);
    spdlog::info("stopped service {}, idle: {}", it->first, info.Describe());
    it = running_.erase(it);
    ++stopped;
  }
  return stopped;
}

size_t ServiceManager::running() {
  std::lock_guard lock(mu_);
  return running_.size();
}

std::vector<pid_t> ServiceManager::Pids(const std::vector<std::string>& names) {
  std::lock_guard lock(mu_);
  std::vector<pid_t> out;
  for (const auto& name : names) {
    auto it = running_.find(name);
    if (it != running_.end() && it->second->process) out.push_back(it->second->process->pid());
  }
  return out;
}

void ServiceManager::ReadProbes(const std::vector<std::string>& names, bool before,
                                std::vector<ProbeReading>& out) {
  for (const auto& name : names) {
    std::shared_ptr<Instance> instance;
    {
      std::lock_guard lock(mu_);
      auto it = running_.find(name);
      if (it != running_.end()) instance = it->second;
    }
    const ServiceDef* def = Find(name);
    if (def == nullptr) continue;
    for (const ProbeDef& probe : def->probes) {
      auto reading = std::find_if(out.begin(), out.end(), [&](const ProbeReading& r) {
        return r.service == name && r.name == probe.name;
      });
      if (reading == out.end()) {
        out.push_back({name, probe.name, std::nullopt, std::nullopt, ""});
        reading = out.end() - 1;
      }
      Result<double> value = Status::Unavailable("service \"" + name + "\" is not running");
      if (instance) {
        std::lock_guard lock(instance->interval_mu);
        auto printed = RunFor(*instance, probe.command, probe.sql, "probe \"" + probe.name + "\"",
                              options_.probe_timeout);
        value = printed.ok() ? ParseProbeOutput(*printed) : Result<double>(printed.status());
        if (!value.ok() && printed.ok()) {
          value = Status::InvalidArgument("service \"" + name + "\" probe \"" + probe.name +
                                          "\": " + value.status().message());
        }
      }
      if (value.ok()) {
        (before ? reading->before : reading->after) = *value;
      } else if (reading->error.empty()) {
        reading->error = value.status().message();
      }
    }
  }
}

std::unique_ptr<ServiceManager::Interval> ServiceManager::Begin(
    const std::vector<std::string>& names) {
  auto interval = std::unique_ptr<Interval>(new Interval());
  interval->manager_ = this;
  {
    std::lock_guard lock(mu_);
    for (const auto& name : names) {
      auto it = running_.find(name);
      if (it == running_.end()) continue;
      auto one = std::make_unique<Interval::One>();
      one->instance = it->second;
      ++one->instance->in_use;
      one->sampler = std::make_unique<IntervalSampler>(env_, one->instance->process->pid(),
                                                       options_.sample_period, nullptr,
                                                       one->instance->cgroup.get());
      interval->ones_.push_back(std::move(one));
    }
  }
  // The samplers first, so that the services' interval starts with the target's.
  for (auto& one : interval->ones_) one->begun = one->sampler->Begin();
  ReadProbes(names, /*before=*/true, interval->probes_);
  return interval;
}

ServiceManager::Interval::~Interval() {
  if (manager_ == nullptr) return;
  std::lock_guard lock(manager_->mu_);
  for (auto& one : ones_) {
    one->sampler.reset();
    --one->instance->in_use;
  }
}

std::vector<ServiceInterval> ServiceManager::Interval::End(std::vector<ProbeReading>* probes) {
  std::vector<ServiceInterval> out;
  std::vector<std::string> names;
  for (auto& one : ones_) {
    ServiceInterval figures;
    figures.name = one->instance->def->name;
    names.push_back(figures.name);
    Result<IntervalFigures> measured =
        one->begun.ok() ? one->sampler->End() : Result<IntervalFigures>(one->begun);
    if (measured.ok()) {
      figures.cpu_user_s = measured->cpu_user_s;
      figures.cpu_sys_s = measured->cpu_sys_s;
      figures.rss_mean_kb = measured->rss_mean_kb;
      figures.rss_peak_kb = measured->rss_peak_kb;
      figures.cpu_source = measured->cpu_source;
    }
    ExitInfo exit;
    if (one->instance->process->Exited(&exit)) {
      figures.alive = false;
      figures.exit = exit.Describe() +
                     "; last log lines: " + JoinLines(one->instance->process->LastLogLines(3));
    } else if (!measured.ok()) {
      figures.alive = false;
      figures.exit = measured.status().message();
    }
    out.push_back(std::move(figures));
  }
  manager_->ReadProbes(names, /*before=*/false, probes_);
  if (probes != nullptr) *probes = probes_;
  return out;
}

}  // namespace benchlab
