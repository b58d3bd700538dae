#include "agent/start_check.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "agent/supervisor.h"
#include "agent/target_runner.h"
#include "common/parse.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

std::string WithCampaignDir(std::string text, const std::string& campaign_dir) {
  const std::string key = "{campaign_dir}";
  for (size_t pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos)) {
    text.replace(pos, key.size(), campaign_dir);
    pos += campaign_dir.size();
  }
  return text;
}

// A placeholder only a start fills in ({run_dir}, {port}, {service.NAME.port}).
bool AwaitsStart(const std::string& text) {
  size_t open = text.find('{');
  return open != std::string::npos && text.find('}', open) != std::string::npos;
}

// Why `what`'s program (argv[0]) cannot be started; "" when it can, or cannot be known yet.
std::string ProgramProblem(const std::string& what, const std::vector<std::string>& argv,
                           const std::string& cwd, const std::map<std::string, std::string>& env,
                           const std::string& campaign_dir) {
  if (argv.empty()) return "";
  const std::string program = WithCampaignDir(argv[0], campaign_dir);
  if (AwaitsStart(program)) return "";
  const bool relative = program.find('/') != std::string::npos && program[0] != '/';
  if (relative && (cwd.empty() || AwaitsStart(cwd))) return "";
  auto found = FindExecutable(program, cwd, env);
  if (found.ok()) return "";
  // FindExecutable speaks of a target's command; say which command of what it was.
  std::string why = found.status().message();
  const std::string prefix = "target command ";
  if (why.starts_with(prefix)) why = what + " " + why.substr(prefix.size());
  return why;
}

bool PortInUse(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool in_use =
      bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 && errno == EADDRINUSE;
  close(fd);
  return in_use;
}

// The checks a target and a service share: CPUs and a fixed port.
void CheckPlacementOnHost(const std::vector<int>& cpus, const std::string& port,
                          const StartCheckOptions& options, std::vector<std::string>* why) {
  if (!options.cpus.empty()) {
    for (int cpu : cpus) {
      if (std::find(options.cpus.begin(), options.cpus.end(), cpu) == options.cpus.end()) {
        why->push_back("cpus: CPU " + std::to_string(cpu) + " is not one this host offers (" +
                       FormatCpuList(options.cpus) + ")");
      }
    }
  }
  if (options.ports && port != "auto") {
    int number = 0;
    if (ParseNumber(port, number) && number > 0 && number < 65536 && PortInUse(number)) {
      why->push_back("port " + port + " is in use on this host");
    }
  }
}

std::vector<std::string> TargetProblems(const TargetDef& def, const StartCheckOptions& options) {
  std::vector<std::string> why;
  const std::string cwd = WithCampaignDir(def.cwd, def.campaign_dir);
  if (!cwd.empty() && !AwaitsStart(cwd) && !fs::is_directory(cwd)) {
    why.push_back("cwd \"" + cwd + "\" is not a directory");
  }
  if (std::string p = ProgramProblem("command", def.command, cwd, def.env, def.campaign_dir);
      !p.empty()) {
    why.push_back(std::move(p));
  }
  if (std::string p =
          ProgramProblem("version command", def.version, cwd, def.env, def.campaign_dir);
      !p.empty()) {
    why.push_back(std::move(p));
  }
  for (const std::string& name : def.templates) {
    const std::string path = WithCampaignDir(name, def.campaign_dir);
    if (AwaitsStart(path)) continue;
    if (!fs::is_regular_file(path) || access(path.c_str(), R_OK) != 0) {
      why.push_back("template \"" + path + "\" is not a readable file");
    } else if (!def.tls) {
      std::ifstream in(path, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      if (Status tls = CheckTemplateTls(path, text, def.name); !tls.ok()) {
        why.push_back(tls.message());
      }
    }
  }
  CheckPlacementOnHost(def.cpus, def.port, options, &why);
  return why;
}

std::vector<std::string> ServiceProblems(const ServiceDef& def, const StartCheckOptions& options) {
  std::vector<std::string> why;
  auto program = [&](const std::string& what, const std::vector<std::string>& argv) {
    std::string p = ProgramProblem(what, argv, "", def.env, def.campaign_dir);
    if (!p.empty()) why.push_back(std::move(p));
  };
  program("command", def.command);
  program("ready_command", def.ready_command);
  for (const auto& setup : def.setup) program("setup command", setup);
  program("reset_command", def.reset_command);
  CheckPlacementOnHost(def.cpus, def.port, options, &why);
  return why;
}

}  // namespace

std::vector<StartProblem> CheckStartable(const std::vector<TargetDef>& targets,
                                         const std::vector<ServiceDef>& services,
                                         const StartCheckOptions& options) {
  std::vector<StartProblem> out;
  for (const TargetDef& def : targets) {
    for (std::string& why : TargetProblems(def, options)) {
      out.push_back({"target", def.name, def.line, std::move(why)});
    }
    for (const std::string& service : def.services) {
      const bool defined = std::any_of(services.begin(), services.end(),
                                       [&](const ServiceDef& s) { return s.name == service; });
      if (!defined) {
        out.push_back({"target", def.name, def.line,
                       "services: \"" + service + "\" is not a [[service]] defined here"});
      }
    }
  }
  for (const ServiceDef& def : services) {
    for (std::string& why : ServiceProblems(def, options)) {
      out.push_back({"service", def.name, def.line, std::move(why)});
    }
  }
  return out;
}

std::string FormatStartProblem(const std::string& source, const StartProblem& problem) {
  std::string where = source;
  if (problem.line > 0) where += ":" + std::to_string(problem.line);
  return where + ": " + problem.kind + " \"" + problem.name + "\": " + problem.why;
}

}  // namespace benchlab
