#include "cli/labels.h"

#include <sstream>
#include <string_view>

#include "common/config_toml.h"

namespace benchlab {

Result<std::map<std::string, std::string>> ParseLabelFlags(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> labels;
  for (const std::string& flag : flags) {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(config::Quote(flag) +
                                     ": expected TARGET=VALUE, such as hello=v1.4.2");
    }
    const std::string target = flag.substr(0, eq);
    if (!labels.emplace(target, flag.substr(eq + 1)).second) {
      return Status::InvalidArgument(config::Quote(flag) + ": target " + target +
                                     " labelled twice; give each target one label");
    }
  }
  return labels;
}

Result<std::string> LabelCampaignText(const Campaign& campaign, const std::string& text,
                                      const std::vector<std::string>& flags) {
  auto labels = ParseLabelFlags(flags);
  if (!labels.ok()) return labels.status();
  return AddCampaignLabels(campaign, text, *labels);
}

Result<std::string> RenameCampaignText(const Campaign& campaign, const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char ch : name)
    ok = ok && ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-');
  if (!ok) return Status::InvalidArgument("expected a name of [a-z0-9-]+, got \"" + name + "\"");
  std::istringstream in(campaign.text);
  std::string out, line;
  bool replaced = false, in_root = true, has_series = false;
  size_t name_end = 0;  // where the line after the name line begins in `out`
  // A root line `key = ...`.
  auto is_key = [&](size_t first, std::string_view key) {
    return in_root && first != std::string::npos && line.compare(first, key.size(), key) == 0 &&
           line.find('=', first) != std::string::npos &&
           line.find_first_not_of(" \t", first + key.size()) == line.find('=', first);
  };
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '[') in_root = false;
    if (is_key(first, "series")) has_series = true;
    if (!replaced && is_key(first, "name")) {
      line = "name = \"" + name + "\"";
      replaced = true;
      out += line + "\n";
      name_end = out.size();
      continue;
    }
    out += line + "\n";
  }
  if (!replaced) return Status::InvalidArgument("the campaign file has no root `name` line");
  if (!has_series) out.insert(name_end, "series = \"" + campaign.series + "\"\n");
  return out;
}

}  // namespace benchlab
