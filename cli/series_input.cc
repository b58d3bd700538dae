#include "cli/series_input.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "cli/command_error.h"

namespace benchlab {

int OpenExistingStore(const char* command, const std::string& db, std::unique_ptr<Store>& out) {
  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(db)) {
    return CommandError(command, kExitUsage, "--db: no database at " + db);
  }
  auto store = Store::Open(db);
  if (!store.ok()) return CommandError(command, kExitFailure, store.status().message());
  out = std::move(*store);
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
