// `benchlab host check | tune | reset`: what on this machine makes measurements noisy, a quieter
// profile for the CPUs a benchmark runs on, and putting back what the profile changed
// (docs/host.md).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/host_check.h"
#include "agent/host_tune.h"
#include "cli/columns.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "common/parse.h"

namespace benchlab {
namespace {

struct HostArgs {
  CLI::App* check = nullptr;
  CLI::App* tune = nullptr;
  CLI::App* reset = nullptr;
  std::string cpus;  // empty: every online CPU (check only)
  std::string format = "text";
  std::string state = kDefaultHostStatePath;
  std::string root;  // a fake / for tests: a directory holding proc/ and sys/
};

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

int RunCheck(SysEnv& env, const std::vector<int>& cpus, const std::string& format) {
  const std::vector<HostFinding> findings = CheckHost(env, cpus);
  if (format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& f : findings) {
      out.push_back({{"name", f.name}, {"value", f.value}, {"status", f.status}, {"why", f.why}});
    }
    Print(out.dump(2) + "\n");
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {{"name", "value", "status", "why"}};
  for (const auto& f : findings) rows.push_back({f.name, f.value, f.status, f.why});
  Print(FormatColumns(rows));
  return kExitOk;
}

int RunTune(SysEnv& env, const std::vector<int>& cpus, const std::string& state) {
  auto report = Tune(env, cpus, state);
  if (!report.ok()) {
    return CommandError(
        "host tune",
        report.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure,
        report.status().message());
  }
  for (const auto& c : report->applied) {
    Print("set " + c.path + " = " + c.new_value + " (was " + c.old_value + ")\n");
  }
  for (const auto& s : report->skipped) Print("left alone " + s + "\n");
  for (const auto& f : report->failed) Print("could not set " + f + "\n");
  Print("tuned CPUs " + FormatCpuList(cpus) + ": " + std::to_string(report->applied.size()) +
        " values changed, " + std::to_string(report->failed.size()) +
        " could not be; saved the old values in " + state +
        " (benchlab host reset puts them back)\n");
  return kExitOk;
}

int RunReset(SysEnv& env, const std::string& state) {
  auto report = Reset(env, state);
  if (!report.ok()) {
    return CommandError("host reset",
                        report.status().code() == StatusCode::kNotFound ? kExitFailure : kExitUsage,
                        report.status().message());
  }
  for (const auto& f : report->failures) Print("could not restore " + f + "\n");
  Print("restored " + std::to_string(report->restored) + " of " + std::to_string(report->total) +
        (report->state_removed ? "; removed " + state + "\n"
                               : "; kept " + state + " for another benchlab host reset\n"));
  return report->state_removed ? kExitOk : kExitFailure;
}

int RunHost(const HostArgs& args) {
  const char* name = args.check->parsed()  ? "host check"
                     : args.tune->parsed() ? "host tune"
                                           : "host reset";
  std::vector<int> cpus;
  if (!args.cpus.empty()) {
    auto parsed = ParseCpuList(args.cpus);
    if (!parsed.ok()) {
      return CommandError(name, kExitUsage, "--cpus: " + parsed.status().message());
    }
    cpus = *parsed;
  }
  std::optional<RootedSysEnv> fake;
  if (!args.root.empty()) fake.emplace(args.root);
  SysEnv& env = fake ? static_cast<SysEnv&>(*fake) : RealSysEnv();
  if (args.check->parsed()) return RunCheck(env, cpus, args.format);
  if (args.tune->parsed()) return RunTune(env, cpus, args.state);
  return RunReset(env, args.state);
}

}  // namespace

CommandRunner AddHostCommand(CLI::App& root) {
  auto args = std::make_shared<HostArgs>();
  CLI::App* cmd = root.add_subcommand(
      "host",
      "This machine as a place to measure: check what makes results noisy, tune the benchmark's "
      "CPUs, reset what tune changed (docs/host.md).");
  cmd->require_subcommand(1);
  auto add_root = [&](CLI::App* sub) {
    sub->add_option("--root", args->root, "a directory standing in for / (for tests)")->group("");
  };
  auto add_state = [&](CLI::App* sub) {
    sub->add_option("--state", args->state, "where tune saves the values it changes")
        ->envname("BENCHLAB_HOST_STATE")
        ->capture_default_str();
  };
  args->check = cmd->add_subcommand(
      "check", "One line per check: name, value as read, ok/warn/unavailable, and why it matters.");
  args->check->add_option("--cpus", args->cpus,
                          "the CPUs measurements run on, e.g. 2-3; default: every online CPU");
  AddFormatOption(args->check, &args->format, {"text", "json"}, "text (a table) or json (an array)")
      ->capture_default_str();
  add_root(args->check);
  args->tune = cmd->add_subcommand(
      "tune",
      "Apply the measurement profile to CPUS (performance governor, no turbo, no deep C-states, "
      "interrupts moved away) and to the host (no ASLR, no transparent huge pages), saving the "
      "old values first. Needs root; lasts until reset or reboot.");
  args->tune->add_option("--cpus", args->cpus, "the CPUs to tune, e.g. 2-3")->required();
  add_state(args->tune);
  add_root(args->tune);
  args->reset = cmd->add_subcommand(
      "reset", "Write back every value tune saved, check each, and remove the state file.");
  add_state(args->reset);
  add_root(args->reset);
  return [args] { return RunHost(*args); };
}

}  // namespace benchlab
