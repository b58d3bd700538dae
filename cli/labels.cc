#include "cli/labels.h"

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

}  // namespace benchlab
