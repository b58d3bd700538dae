#include "common/build_recipe.h"

#include <nlohmann/json.hpp>

#include "common/printable.h"

namespace benchlab {

std::string UnknownBuildPlaceholder(std::string_view text) {
  for (size_t open = text.find('{'); open != text.npos; open = text.find('{', open + 1)) {
    size_t end = open + 1;
    while (end < text.size() && ((text[end] >= 'a' && text[end] <= 'z') || text[end] == '_')) {
      ++end;
    }
    if (end == open + 1 || end >= text.size() || text[end] != '}') continue;
    std::string_view word = text.substr(open, end - open + 1);
    if (word != "{src}" && word != "{out}") return std::string(word);
  }
  return "";
}

Status CheckBuildRecipe(const BuildRecipe& recipe) {
  if (recipe.source.empty() || recipe.source.front() != '/') {
    return Status::InvalidArgument("build source \"" + PrintableText(recipe.source) +
                                   "\": expected the absolute path of a git work tree");
  }
  if (recipe.build.empty()) {
    return Status::InvalidArgument("build: expected a list of steps, each a list of strings");
  }
  for (size_t i = 0; i < recipe.build.size(); ++i) {
    const auto& step = recipe.build[i];
    const std::string where = "build[" + std::to_string(i) + "]";
    if (step.empty()) {
      return Status::InvalidArgument(where + ": expected a non-empty list of strings (argv)");
    }
    for (const std::string& arg : step) {
      if (arg.empty()) return Status::InvalidArgument(where + ": expected no empty string");
      if (std::string unknown = UnknownBuildPlaceholder(arg); !unknown.empty()) {
        return Status::InvalidArgument(where + ": expected only the placeholders {src} and " +
                                       "{out}, got \"" + PrintableText(unknown) + "\"");
      }
    }
  }
  if (recipe.time_limit.count() <= 0) {
    return Status::InvalidArgument("build_timeout: expected a duration greater than zero");
  }
  if (recipe.max_output_bytes == 0) {
    return Status::InvalidArgument("build output limit: expected 1 byte or more");
  }
  return Status::Ok();
}

std::string CanonicalRecipeText(const BuildRecipe& recipe) {
  nlohmann::json j;
  j["build"] = recipe.build;
  j["time_limit_ms"] = recipe.time_limit.count();
  j["max_output_bytes"] = recipe.max_output_bytes;
  // dump() writes object keys sorted, without spaces: one text per recipe.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string FillBuildPlaceholders(std::string_view text, const std::string& src,
                                  const std::string& out) {
  std::string filled;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text.substr(pos).starts_with("{src}")) {
      filled += src;
      pos += 5;
    } else if (text.substr(pos).starts_with("{out}")) {
      filled += out;
      pos += 5;
    } else {
      filled += text[pos++];
    }
  }
  return filled;
}

}  // namespace benchlab
