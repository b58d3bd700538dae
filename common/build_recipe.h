// BuildRecipe: how an agent builds one commit of a target's source (docs/agent.md, "Builds"):
// the git work tree it comes from and the argv steps, run without a shell, that turn a fresh
// checkout into an output directory. It lives with the target in the agent's own catalogue
// (common/target.h), never in a message. agent/build_cache.h runs it. Value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace benchlab {

struct BuildRecipe {
  std::string source;  // absolute path of a git work tree
  // argv steps, run in order with the checkout as working directory; each string may hold {src}
  // (the fresh checkout) and {out} (the output directory) and no other {word}.
  std::vector<std::vector<std::string>> build;
  std::chrono::milliseconds time_limit{10 * 60 * 1000};  // the checkout and every step together
  uint64_t max_output_bytes = 1ull << 30;                // the output directory's files, in all

  bool empty() const { return build.empty(); }
};

// The first {word} of lowercase letters and '_' in `text` that is neither {src} nor {out}, with
// its braces; empty when there is none.
std::string UnknownBuildPlaceholder(std::string_view text);

// InvalidArgument naming what is wrong: a source that is not an absolute path, no step, an empty
// step or argument, an unknown placeholder, a zero time or size limit.
Status CheckBuildRecipe(const BuildRecipe& recipe);

// The steps and limits as one canonical text (JSON), part of a build's cache key: two recipes
// with the same text build the same output from the same commit. The source's path is not in
// it, so one commit of two clones shares a build.
std::string CanonicalRecipeText(const BuildRecipe& recipe);

// `text` with {src} and {out} replaced.
std::string FillBuildPlaceholders(std::string_view text, const std::string& src,
                                  const std::string& out);

}  // namespace benchlab
