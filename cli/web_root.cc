#include "cli/web_root.h"

#include <system_error>

namespace benchlab {

std::string WebRootFor(const std::filesystem::path& exe) {
  const std::filesystem::path prefix = exe.parent_path().parent_path();
  const std::filesystem::path build = prefix / "web";
  const std::filesystem::path installed = prefix / "share" / "benchlab" / "web";
  std::error_code ec;
  if (!std::filesystem::exists(build / "index.html", ec) &&
      std::filesystem::exists(installed / "index.html", ec)) {
    return installed.string();
  }
  return build.string();
}

std::string DefaultWebRoot() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return WebRootFor(exe);
}

}  // namespace benchlab
