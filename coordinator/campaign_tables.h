// Internal to campaign parsing (campaign*.cc only): the [[scenario]], [[negative]] and [noise]
// tables, and the open-loop rate form. Not thread-safe; one instance per parse.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/config_fields.h"
#include "coordinator/campaign.h"

namespace benchlab::config {

// A [[scenario]] or a [[negative]]: they have the same shape.
void ReadScenario(const Value& item, std::string label, Issues& issues, ScenarioDef& out);

// An open-loop rate: a positive number (integer or float) of requests per second up to 1e7.
std::optional<double> ReadRate(Table& t, std::string_view sub, const Value& v);

// The [noise] table's own forms. Its load level is left zero when the file gives none.
void ReadNoise(const Value& v, Issues& issues, NoiseSpec& out);
// Once the rest of the file is clean (so that a bad target or level is not reported twice):
// [noise]'s target, scenario and load level must be ones the file defines; an unset level
// becomes the matrix's first.
void CheckNoise(const Value& v, Issues& issues, Campaign& c);

}  // namespace benchlab::config
