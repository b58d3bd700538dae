// What `benchlab run` and `benchlab submit` change in the campaign text they submit:
// `--label TARGET=VALUE` (docs/campaign.md, "[labels]"), the flags read into labels and added to
// the text, and `--name NAME`, the campaign stored under another name.
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

// The campaign's text with its root `name = ...` line replaced by `name`; the coordinator parses
// and validates the result again. A file without a `series` key keeps its own name as its series
// (docs/history.md): `benchlab run nightly.toml --name nightly-42` joins the history "nightly".
// InvalidArgument for a name that is not [a-z0-9-]{1,64}, or a text without a root name line.
Result<std::string> RenameCampaignText(const Campaign& campaign, const std::string& name);

}  // namespace benchlab
