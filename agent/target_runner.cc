#include "agent/target_runner.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/private_dir.h"
#include "agent/proc.h"
#include "common/parse.h"
#include "common/printable.h"
#include "loadgen/http_client.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using Ms = std::chrono::duration<double, std::milli>;

// `path` resolved by realpath(3) when it lies inside one of `dirs` (each resolved too);
// PermissionDenied naming the directories otherwise.
Result<std::string> ResolveInside(const std::string& path, const std::vector<std::string>& dirs) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    return Status::NotFound("template " + path + ": cannot read it: " + std::strerror(errno));
  }
  const std::string file = resolved;
  std::string allowed;
  for (const auto& dir : dirs) {
    char root[PATH_MAX];
    if (dir.empty() || realpath(dir.c_str(), root) == nullptr) continue;
    std::string prefix = root;
    if (prefix.back() != '/') prefix += '/';
    if (file.starts_with(prefix)) return file;
    allowed += (allowed.empty() ? "" : " or ") + std::string(root);
  }
  return Status::PermissionDenied("template " + path + " resolves to " + file +
                                  ", outside the directories templates may come from (" +
                                  (allowed.empty() ? "none" : allowed) + ")");
}

Result<std::string> ReadNoFollow(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return Status::NotFound("template " + path + ": cannot read it: " + std::strerror(errno));
  }
  std::string text;
  char buf[16 * 1024];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  int err = errno;
  close(fd);
  if (n < 0) return Status::IoError("template " + path + ": " + std::strerror(err));
  return text;
}

// FailedPrecondition when `text` holds {out} and no build's output directory fills it.
Status CheckOutFilled(const std::string& text, const std::string& out_dir, const TargetDef& def) {
  if (!out_dir.empty() || text.find("{out}") == std::string::npos) return Status::Ok();
  return Status::FailedPrecondition("target \"" + def.name +
                                    "\" uses {out} but no commit was asked for");
}

Status RenderTemplate(const std::string& source, const std::vector<std::string>& dirs,
                      uint16_t port, const std::string& run_dir, const TargetDef& def,
                      const std::string& out_dir) {
  auto resolved = ResolveInside(source, dirs);
  if (!resolved.ok()) return resolved.status();
  auto text = ReadNoFollow(*resolved);
  if (!text.ok()) return text.status();
  if (!def.tls) BENCHLAB_RETURN_IF_ERROR(CheckTemplateTls(source, *text, def.name));
  if (Status out = CheckOutFilled(*text, out_dir, def); !out.ok()) {
    return Status(out.code(), "template " + source + ": " + out.message());
  }
  std::string name = fs::path(source).filename().string();
  if (name.size() > 3 && name.ends_with(".in")) name.resize(name.size() - 3);
  std::string dest = (fs::path(run_dir) / name).string();
  std::string filled = FillPlaceholders(*text, port, run_dir, def.campaign_dir, def.tls);
  if (!out_dir.empty()) ReplaceAll(filled, "{out}", out_dir);
  Status written = WritePrivateFile(dest, filled);
  if (!written.ok()) return Status(written.code(), "template " + source + ": " + written.message());
  return Status::Ok();
}

}  // namespace

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += (out.empty() ? "" : " | ") + line;
  return out.empty() ? "(log empty)" : out;
}

Status CheckTemplateTls(const std::string& source, const std::string& text,
                        const std::string& target) {
  size_t at = std::string::npos;
  std::string word;
  for (const char* placeholder : {"{tls_cert}", "{tls_key}", "{tls_ca}"}) {
    const size_t found = text.find(placeholder);
    if (found < at) {
      at = found;
      word = placeholder;
    }
  }
  if (at == std::string::npos) return Status::Ok();
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(at), '\n');
  return Status::InvalidArgument("template " + source + ":" + std::to_string(line) + ": " + word +
                                 " is filled only for a target with tls = true, and target \"" +
                                 target + "\" has none");
}

std::string FillPlaceholders(const std::string& text, uint16_t port, const std::string& run_dir,
                             const std::string& campaign_dir, bool tls) {
  std::string out = text;
  ReplaceAll(out, "{port}", std::to_string(port));
  ReplaceAll(out, "{run_dir}", run_dir);
  ReplaceAll(out, "{campaign_dir}", campaign_dir);
  if (tls) {
    const TargetTlsFiles files(run_dir);
    ReplaceAll(out, "{tls_cert}", files.cert);
    ReplaceAll(out, "{tls_key}", files.key);
    ReplaceAll(out, "{tls_ca}", files.ca);
  }
  return out;
}

Result<std::string> ReadTargetVersion(SysEnv& env, const TargetDef& def,
                                      const std::string& scratch_dir) {
  if (def.version.empty()) return std::string("unavailable");
  BENCHLAB_RETURN_IF_ERROR(EnsurePrivateDir("run_root", scratch_dir));
  SpawnSpec spec;
  for (const auto& arg : def.version) {
    spec.argv.push_back(FillPlaceholders(arg, 0, scratch_dir, def.campaign_dir));
  }
  spec.cwd = scratch_dir;
  spec.env = def.env;
  spec.log_path = (fs::path(scratch_dir) / (def.name + ".version")).string();
  auto process = TargetProcess::Spawn(env, spec);
  if (!process.ok()) return process.status();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  ExitInfo exit;
  if (!(*process)->WaitExit(deadline, &exit)) {
    (*process)->Stop(std::chrono::milliseconds(500));
    return Status::DeadlineExceeded("version command of target \"" + def.name +
                                    "\" did not finish within 5s");
  }
  std::ifstream in(spec.log_path);
  std::string line;
  std::getline(in, line);
  if (exit.exit_code != 0 || line.empty()) {
    return Status::FailedPrecondition("version command of target \"" + def.name + "\": " +
                                      exit.Describe() + (line.empty() ? ", no output" : ""));
  }
  // The coordinator takes only printable version lines (docs/security.md, "Limits"): a tool
  // that colours its output, or ends its line with \r, is shown escaped rather than refused.
  return PrintableText(line);
}

Result<uint16_t> PickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    close(fd);
    return Status::IoError(std::string("picking a free port: ") + std::strerror(err));
  }
  close(fd);
  return static_cast<uint16_t>(ntohs(addr.sin_port));
}

Result<std::vector<int>> PinnedCpus(const std::string& what, const std::vector<int>& asked,
                                    const std::vector<int>& allowed) {
  if (asked.empty()) return allowed;
  if (!allowed.empty() &&
      !std::includes(allowed.begin(), allowed.end(), asked.begin(), asked.end())) {
    return Status::InvalidArgument(what + ": CPUs " + FormatCpuList(asked) +
                                   " are outside this agent's allowed CPUs " +
                                   FormatCpuList(allowed));
  }
  return asked;
}

Result<uint16_t> ResolvePort(const std::string& port) {
  if (port == "auto") return PickFreePort();
  return static_cast<uint16_t>(std::stoi(port));
}

Result<std::unique_ptr<TargetProcess>> SpawnFrom(SysEnv& env, const SpawnSpec& spec,
                                                 SpawnThread* spawner) {
  if (spawner == nullptr) return TargetProcess::Spawn(env, spec);
  Result<std::unique_ptr<TargetProcess>> spawned =
      Status::Internal("the spawner thread did not run the spawn");
  spawner->Run([&] { spawned = TargetProcess::Spawn(env, spec); });
  return spawned;
}

Result<Launched> LaunchInCgroup(SysEnv& env, SpawnSpec spec, bool use_cgroup,
                                const std::string& cgroup_name, const std::string& cgroup_parent,
                                SpawnThread* spawner) {
  Launched out;
  spec.die_with_parent = spawner != nullptr;
  if (use_cgroup) {
    auto made = WindowCgroup::Create(env, cgroup_name, cgroup_parent);
    if (made.ok()) {
      out.cgroup = std::move(made).value();
      spec.cgroup_procs = out.cgroup->procs_path();
    } else {
      out.cgroup_note = made.status().message();
    }
  }
  auto spawned = SpawnFrom(env, spec, spawner);
  if (!spawned.ok()) return spawned.status();
  out.process = std::move(spawned).value();
  return out;
}

Result<RunningTarget> LaunchTarget(SysEnv& env, const TargetDef& def, const std::vector<int>& cpus,
                                   const std::string& run_dir, const StartOptions& options) {
  // {out}: the build's output directory, known only when a commit was built for this start.
  for (const std::string& text : def.command) {
    BENCHLAB_RETURN_IF_ERROR(CheckOutFilled(text, options.out_dir, def));
  }
  for (const std::string& text : def.templates) {
    BENCHLAB_RETURN_IF_ERROR(CheckOutFilled(text, options.out_dir, def));
  }
  for (const auto& [name, value] : def.env) {
    BENCHLAB_RETURN_IF_ERROR(CheckOutFilled(value, options.out_dir, def));
  }
  BENCHLAB_RETURN_IF_ERROR(CheckOutFilled(def.cwd, options.out_dir, def));
  auto fill = [&](const std::string& text, uint16_t port) {
    std::string out = FillPlaceholders(text, port, run_dir, def.campaign_dir, def.tls);
    if (!options.out_dir.empty()) ReplaceAll(out, "{out}", options.out_dir);
    return out;
  };
  auto pinned_cpus = PinnedCpus("target \"" + def.name + "\"", cpus.empty() ? def.cpus : cpus,
                                options.allowed_cpus);
  if (!pinned_cpus.ok()) return pinned_cpus.status();
  const std::vector<int>& pinned = *pinned_cpus;
  // The run root is checked at every start: it must still be the agent's own.
  BENCHLAB_RETURN_IF_ERROR(EnsurePrivateDir("run_root", fs::path(run_dir).parent_path().string()));
  if (Status made = MakePrivateDir(run_dir); !made.ok()) {
    return Status(made.code(), "run directory: " + made.message());
  }

  auto resolved_port = ResolvePort(def.port);
  if (!resolved_port.ok()) return resolved_port.status();
  const uint16_t port = *resolved_port;
  std::string tls_ca_pem;
  if (def.tls) {
    auto made = MakeTargetTls(run_dir, {options.ready_host});
    if (!made.ok()) {
      return Status(
          made.status().code(),
          "target \"" + def.name + "\": making its TLS certificate: " + made.status().message());
    }
    tls_ca_pem = std::move(made).value();
  }
  std::vector<std::string> template_dirs = options.template_dirs;
  template_dirs.push_back(def.campaign_dir);
  for (const auto& tmpl : def.templates) {
    BENCHLAB_RETURN_IF_ERROR(
        RenderTemplate(fill(tmpl, port), template_dirs, port, run_dir, def, options.out_dir));
  }

  SpawnSpec spec;
  for (const auto& arg : def.command) spec.argv.push_back(fill(arg, port));
  spec.cwd = def.cwd.empty() ? run_dir : fill(def.cwd, port);
  spec.env = def.env;
  if (!options.out_dir.empty()) {
    for (auto& [name, value] : spec.env) ReplaceAll(value, "{out}", options.out_dir);
  }
  spec.env.insert(options.tag_env.begin(), options.tag_env.end());
  spec.env["PORT"] = std::to_string(port);
  spec.cpus = pinned;
  spec.log_path = (fs::path(run_dir) / "target.log").string();

  auto spawn_start = std::chrono::steady_clock::now();
  auto launched =
      LaunchInCgroup(env, spec, options.use_cgroup, fs::path(run_dir).filename().string(),
                     options.cgroup_parent, options.spawner);
  if (!launched.ok()) {
    return Status(launched.status().code(),
                  "starting target \"" + def.name + "\": " + launched.status().message());
  }
  RunningTarget running;
  running.cgroup = std::move(launched->cgroup);
  running.cgroup_note = std::move(launched->cgroup_note);
  running.process = std::move(launched->process);
  running.run_dir = run_dir;
  running.port = port;
  running.cpus = spec.cpus;
  running.tls_ca_pem = tls_ca_pem;

  HttpRequest probe;
  probe.path = def.ready;
  // Over TLS the target's certificate is verified against its run directory's CA, for the name
  // the certificate is made for whatever address the probe dials.
  const ProbeTls probe_tls{tls_ca_pem, "localhost"};
  auto deadline = spawn_start + def.ready_timeout;
  std::string last_error = "no answer yet";
  while (true) {
    if (options.cancel != nullptr && options.cancel->cancelled()) {
      running.process->Stop(std::chrono::milliseconds(1000));
      return Status::Cancelled("target \"" + def.name + "\": start abandoned before it was ready");
    }
    ExitInfo exit;
    if (running.process->Exited(&exit)) {
      return Status::FailedPrecondition(
          "target \"" + def.name + "\" exited before it was ready (" + exit.Describe() +
          "); last log lines: " + JoinLines(running.process->LastLogLines(5)));
    }
    auto sent = std::chrono::steady_clock::now();
    auto reply = HttpRoundTrip(options.ready_host, port, probe, std::chrono::milliseconds(500),
                               LoadOptions::kDefaultMaxBody, def.tls ? &probe_tls : nullptr);
    auto done = std::chrono::steady_clock::now();
    if (reply.ok() && reply->status >= 200 && reply->status < 300) {
      running.startup_ms = Ms(done - spawn_start).count();
      running.first_request_ms = Ms(done - sent).count();
      break;
    }
    last_error = reply.ok() ? "status " + std::to_string(reply->status) : reply.status().message();
    if (done >= deadline) {
      running.process->Stop(std::chrono::milliseconds(1000));
      return Status::DeadlineExceeded(
          "target \"" + def.name + "\" not ready at " +
          HostPort{options.ready_host, port}.ToString() + def.ready + " within " +
          std::to_string(def.ready_timeout.count()) + "ms (" + last_error +
          "); last log lines: " + JoinLines(running.process->LastLogLines(5)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  ProcTreeSampler sampler(env, running.process->pid());
  auto idle = sampler.Sample();
  if (idle.ok()) {
    running.idle_rss_kb = idle->rss_kb;
    if (!spec.cpus.empty()) {
      Status pinned_ok = CheckThreadAffinity(env, idle->pids, spec.cpus);
      if (!pinned_ok.ok()) {
        running.process->Stop(std::chrono::milliseconds(1000));
        return Status::FailedPrecondition("target \"" + def.name +
                                          "\" left its CPUs: " + pinned_ok.message());
      }
    }
  }
  return running;
}

}  // namespace benchlab
