// The agent's own directories (run_root, spool_dir, state_dir and what it makes below them) are
// private: created with mode 0700, and an existing one is used only when it is a real directory
// (not a symbolic link), owned by the agent's effective uid and writable by nobody else, so that
// another local user cannot steer where the agent writes or deletes (docs/agent.md, "Where the
// agent writes"). Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace benchlab {

// Makes `path` (an absolute path) and its missing parents with mode 0700, then checks `path`
// itself as above. Errors name `key` (the configuration key the path came from) and the path:
// "run_root /srv/run: is a symbolic link; the agent uses only a directory of its own".
Status EnsurePrivateDir(std::string_view key, const std::string& path);

// Makes one new directory with mode 0700; its parent must exist. An existing entry of that name
// is an error (per-window directories have unguessable names and are never reused).
Status MakePrivateDir(const std::string& path);

// Writes `bytes` to `path`, created (or truncated) with mode 0600; a symbolic link at `path` is
// refused rather than followed.
Status WritePrivateFile(const std::string& path, const std::string& bytes);

}  // namespace benchlab
