// Readers for the value forms benchlab's TOML files share (names, bounded integers, durations,
// CPU lists, paths, argv with placeholders) and for a [[target]] table, which campaign files and
// agent configurations both hold. Each reader records a problem in the table's Issues and returns
// nothing when the value is not of its form. Not thread-safe; one instance per parse.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/config_toml.h"
#include "common/service.h"
#include "common/target.h"

namespace benchlab::config {

// [a-z0-9-]+, 1 to 64 characters: names appear in the CLI, the store and URLs unquoted.
bool IsName(std::string_view text);

std::optional<std::string> ReadName(Table& t, std::string_view sub, const Value& v);
std::optional<int> ReadInt(Table& t, std::string_view sub, const Value& v, int64_t lo, int64_t hi,
                           std::string_view form);
std::optional<std::chrono::nanoseconds> ReadDuration(Table& t, std::string_view sub, const Value& v,
                                                     bool allow_zero);
std::optional<std::vector<int>> ReadCpus(Table& t, std::string_view sub, const Value& v);

// Names already used in one namespace, with the line of their first use.
struct NameBook {
  std::map<std::string, uint32_t> first_line;
};

// The tables of an array of tables (`[[key]]`) with the label each is cited by: `key "name"`
// when it has a usable name not used before, else `key[i]`. A repeated name is reported here.
std::vector<std::pair<std::string, const Value*>> TablesOf(Table& root, const Value& v,
                                                           std::string_view key, NameBook& names,
                                                           Issues& issues);

// A path starting with '/', without spaces or control characters (it goes on a request line).
bool IsPath(std::string_view text);
std::optional<std::string> ReadPath(Table& t, std::string_view sub, const Value& v);
std::optional<std::string> ReadString(Table& t, std::string_view sub, const Value& v);

// Where a [[target]] table is: a campaign file's also takes `commit` and `of`; an agent's
// catalogue's does not (a catalogue entry runs its own command).
enum class TargetFile { kCampaign, kCatalogue };

// A [[target]] table (common/target.h); campaign_dir fills {campaign_dir}.
void ReadTarget(const Value& item, std::string label, Issues& issues,
                const std::string& campaign_dir, TargetDef& out, TargetFile file);

// A [[service]] table (common/service.h) with its [[service.probe]] tables.
void ReadService(const Value& item, std::string label, Issues& issues,
                 const std::string& campaign_dir, ServiceDef& out);

// Every name in a target's `services` must be a [[service]] of the same file, and every
// {service.NAME.FIELD} in its command, cwd and env a service it lists, FIELD one of port, host,
// run_dir. Problems are reported at the target's line.
void CheckServiceReferences(const std::vector<TargetDef>& targets,
                            const std::vector<ServiceDef>& services, Issues& issues);

}  // namespace benchlab::config
