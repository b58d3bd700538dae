// Where `benchlab coordinator` finds the dashboard's files (index.html, assets/) when --web-root
// is not given, from the path of its own executable (docs/packaging.md):
//   build tree:  build/bin/benchlab  -> build/web
//   installed:   /usr/bin/benchlab   -> /usr/share/benchlab/web
// The installed layout also holds inside a `dpkg-deb -x` tree (ROOT/usr/bin/benchlab).
#pragma once

#include <filesystem>
#include <string>

namespace benchlab {

// <exe's directory>/../web when it holds index.html, else <exe's directory>/../share/benchlab/web
// when that does; neither: the build tree's, whose absence the dashboard then reports.
std::string WebRootFor(const std::filesystem::path& exe);

// WebRootFor(/proc/self/exe); "" when /proc/self/exe cannot be read.
std::string DefaultWebRoot();

}  // namespace benchlab
