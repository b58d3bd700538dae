// `--label TARGET=VALUE` of `benchlab run` and `benchlab submit` (docs/campaign.md, "[labels]"):
// the flags read into labels and added to the campaign text the command submits.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "coordinator/campaign.h"

namespace benchlab {

// Each flag "TARGET=VALUE" (split at the first '=') into target -> value. InvalidArgument,
// naming the flag, for one without '=' or with nothing before it, or a target given twice.
// Values are checked by AddCampaignLabels.
Result<std::map<std::string, std::string>> ParseLabelFlags(const std::vector<std::string>& flags);

// `text` (the campaign's text as it will be submitted; `campaign` is it parsed) with the flags'
// labels added by AddCampaignLabels; `text` itself without flags.
Result<std::string> LabelCampaignText(const Campaign& campaign, const std::string& text,
                                      const std::vector<std::string>& flags);

}  // namespace benchlab
