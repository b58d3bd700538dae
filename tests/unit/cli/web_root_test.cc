#include "cli/web_root.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/support/temp_dir.h"

namespace benchlab {
namespace {

void WritePage(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "index.html") << "<!doctype html>\n";
}

TEST(WebRootTest, TheBuildTreesWebBesideBinComesFirst) {
  TempDir root;
  const std::filesystem::path prefix = root.path();
  WritePage(prefix / "web");
  WritePage(prefix / "share/benchlab/web");
  EXPECT_EQ(WebRootFor(prefix / "bin/benchlab"), (prefix / "web").string());
}

TEST(WebRootTest, AnInstalledBinaryFindsShareBenchlabWeb) {
  // /usr/bin/benchlab -> /usr/share/benchlab/web, as the Debian package installs it.
  TempDir root;
  const std::filesystem::path usr = std::filesystem::path(root.path()) / "usr";
  WritePage(usr / "share/benchlab/web");
  EXPECT_EQ(WebRootFor(usr / "bin/benchlab"), (usr / "share/benchlab/web").string());
}

TEST(WebRootTest, AWebDirectoryWithoutIndexHtmlDoesNotHideTheInstalledOne) {
  TempDir root;
  const std::filesystem::path usr = std::filesystem::path(root.path()) / "usr";
  std::filesystem::create_directories(usr / "web");
  WritePage(usr / "share/benchlab/web");
  EXPECT_EQ(WebRootFor(usr / "bin/benchlab"), (usr / "share/benchlab/web").string());
}

TEST(WebRootTest, WithNeitherTheBuildTreesPathIsNamed) {
  // The dashboard then reports that no files are at that path (docs/api.md).
  TempDir root;
  const std::filesystem::path prefix = root.path();
  EXPECT_EQ(WebRootFor(prefix / "bin/benchlab"), (prefix / "web").string());
}

}  // namespace
}  // namespace benchlab
