#include "cli/series_input.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "cli/command_error.h"
#include "coordinator/server/series_store.h"

namespace benchlab {

int ParseSeriesFilter(const char* command, const std::string& cell, const std::string& target,
                      SeriesFilter& filter) {
  filter.target = target;
  if (cell.empty()) return kExitOk;
  const size_t slash = cell.find('/');
  filter.scenario = cell.substr(0, slash);
  if (slash != std::string::npos) filter.load_level = cell.substr(slash + 1);
  if (filter.scenario.empty() || (slash != std::string::npos && filter.load_level.empty())) {
    return CommandError(
        command, kExitUsage,
        "--cell: expected SCENARIO or SCENARIO/LEVEL such as json/c64, got \"" + cell + "\"");
  }
  return kExitOk;
}

int LoadSeriesInput(const char* command, const std::string& db, const std::string& series,
                    SeriesInput& out) {
  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(db))
    return CommandError(command, kExitUsage, "--db: no database at " + db);
  auto store = Store::Open(db);
  if (!store.ok()) return CommandError(command, kExitFailure, store.status().message());
  auto loaded = LoadStoredSeries(**store, series, db);
  if (!loaded.ok()) {
    return CommandError(command, loaded.status());
  }
  out.campaigns = std::move(loaded->campaigns);
  out.inputs = std::move(loaded->inputs);
  out.store = std::move(*store);
  return kExitOk;
}

int WriteCommandOutput(const char* command, const std::string& text, const std::string& output) {
  if (output.empty() || output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0
               ? kExitOk
               : CommandError(command, kExitFailure, "writing to stdout failed");
  }
  const std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return CommandError(command, kExitUsage, "--output: cannot write " + output);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp);
      return CommandError(command, kExitFailure, "writing " + output + " failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, output, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    return CommandError(command, kExitFailure, "writing " + output + ": " + ec.message());
  }
  return kExitOk;
}

}  // namespace benchlab
