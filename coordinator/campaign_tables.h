// Internal to campaign parsing (campaign*.cc only): the [[scenario]] and [[negative]] tables.
// Not thread-safe; one instance per parse.
#pragma once

#include <string>

#include "common/config_fields.h"
#include "coordinator/campaign.h"

namespace benchlab::config {

// A [[scenario]] or a [[negative]]: they have the same shape.
void ReadScenario(const Value& item, std::string label, Issues& issues, ScenarioDef& out);

}  // namespace benchlab::config
