// Reading a campaign file's [gates] table into a GateConfig (coordinator/gates.h), apart from the
// gates themselves so that only the campaign parser compiles against TOML.
#pragma once

#include "common/config_toml.h"
#include "coordinator/gates.h"

namespace benchlab {

// Reads a campaign file's [gates] table into `out`, leaving absent keys at what `out` holds.
// Problems go to `issues` as one line each, e.g.
//   hello.toml:13: gates.foreign_cpu_max_pct: expected a number from 0 to 10000, got "ten"
// Unknown keys are problems too. campaign.cc calls it as ReadGatesTable(*v, issues, c.gates).
void ReadGatesTable(const config::Value& table, config::Issues& issues, GateConfig& out);

}  // namespace benchlab
