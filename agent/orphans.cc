#include "agent/orphans.h"

#include <signal.h>

#include <cctype>
#include <set>
#include <thread>

#include "agent/proc.h"

namespace benchlab {
namespace {

// The cookie's value in a NUL-separated /proc/<pid>/environ, or "" when absent.
std::string CookieIn(const std::string& environ) {
  const std::string key = std::string(kAgentCookieVar) + "=";
  size_t pos = 0;
  while (pos < environ.size()) {
    size_t end = environ.find('\0', pos);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(pos, key.size(), key) == 0) {
      return environ.substr(pos + key.size(), end - pos - key.size());
    }
    pos = end + 1;
  }
  return "";
}

bool IsPid(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string AgentCookie(const std::string& agent_name, const std::string& instance) {
  return agent_name + ":" + instance;
}

std::string AgentInstance(SysEnv& env, pid_t agent_pid) {
  uint64_t start = 0;
  if (auto stat = env.ReadFile("/proc/" + std::to_string(agent_pid) + "/stat"); stat.ok()) {
    if (auto parsed = ParseProcStat(*stat); parsed.ok()) start = parsed->starttime;
  }
  return std::to_string(agent_pid) + "." + std::to_string(start);
}

namespace {

// Is the agent that wrote this instance still running? An instance that is not "<pid>.<start>"
// (an older agent's) counts as gone.
bool InstanceAlive(SysEnv& env, const std::string& instance) {
  size_t dot = instance.find('.');
  if (dot == std::string::npos || dot == 0 || !IsPid(instance.substr(0, dot))) return false;
  pid_t pid = static_cast<pid_t>(std::stol(instance.substr(0, dot)));
  return AgentInstance(env, pid) == instance;
}

}  // namespace

std::vector<pid_t> FindOrphans(SysEnv& env, const std::string& agent_name,
                               const std::string& instance) {
  std::vector<pid_t> found;
  auto entries = env.ListDir("/proc");
  if (!entries.ok()) return found;
  const std::string prefix = agent_name + ":";
  const std::string mine = AgentCookie(agent_name, instance);
  for (const auto& name : *entries) {
    if (!IsPid(name)) continue;
    auto environ = env.ReadFile("/proc/" + name + "/environ");
    if (!environ.ok()) continue;  // gone, or not ours to read
    std::string cookie = CookieIn(*environ);
    if (cookie.compare(0, prefix.size(), prefix) == 0 && cookie != mine &&
        !InstanceAlive(env, cookie.substr(prefix.size()))) {
      found.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return found;
}

std::vector<pid_t> StopOrphans(SysEnv& env, const std::string& agent_name,
                               const std::string& instance, std::chrono::milliseconds grace) {
  std::vector<pid_t> orphans = FindOrphans(env, agent_name, instance);
  // Targets lead their own groups; signalling a group once takes its every member.
  std::set<pid_t> groups;
  for (pid_t pid : orphans) {
    pid_t group = pid;
    if (auto stat = env.ReadFile("/proc/" + std::to_string(pid) + "/stat"); stat.ok()) {
      if (auto parsed = ParseProcStat(*stat); parsed.ok() && parsed->pgrp > 1) group = parsed->pgrp;
    }
    groups.insert(group);
  }
  auto signal_all = [&](int sig) {
    for (pid_t group : groups) {
      if (!env.Signal(-group, sig).ok()) (void)env.Signal(group, sig);
    }
  };
  if (orphans.empty()) return orphans;
  signal_all(SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline &&
         !FindOrphans(env, agent_name, instance).empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!FindOrphans(env, agent_name, instance).empty()) signal_all(SIGKILL);
  return orphans;
}

}  // namespace benchlab
