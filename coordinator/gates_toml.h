// Reading a campaign file's [gates] table into a GateConfig (coordinator/gates.h), apart from the
// gates themselves so that only the campaign parser compiles against TOML.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/config_toml.h"
#include "coordinator/gate_table.h"
#include "coordinator/gates.h"

namespace benchlab {

// Reads a campaign file's [gates] table into `out`, leaving absent keys at what `out` holds.
// Problems go to `issues` as one line each, e.g.
//   hello.toml:13: gates.foreign_cpu_max_pct: expected a number from 0 to 10000, got "ten"
// Unknown keys are problems too. campaign.cc calls it as ReadGatesTable(*v, issues, c.gates).
void ReadGatesTable(const config::Value& table, config::Issues& issues, GateConfig& out);

// What a [gates] key (coordinator/gate_table.h) expects, as the errors above say it: "a number
// from 0 to 10000", "true or false".
std::string GateKeyForm(const GateKey& key);
// The key's default as TOML writes it ("true", "25", "\"enforce\""): what a default GateConfig
// holds; nullopt when the key is unset by default (remeasure_max, probe).
std::optional<std::string> GateKeyDefault(const GateKey& key);

// "enforce" or "warn", as [gates] mode writes a GateMode.
std::string_view GateModeName(GateMode mode);
std::optional<GateMode> ParseGateMode(std::string_view text);

}  // namespace benchlab
