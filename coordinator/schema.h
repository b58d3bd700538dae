// Schema: the store's tables as an ordered list of migrations, and the code that applies them.
// Internal to the store (only store.cc and its tests include it); the tables are public and
// documented in docs/store.md. The database's PRAGMA user_version is the number of migrations
// applied, so a database is never migrated twice and a newer one is refused, not damaged.
// Stateless; callers serialise access to the connection they pass.
#pragma once

#include <span>
#include <string>

#include "common/status.h"

struct sqlite3;

namespace benchlab::schema {

struct Migration {
  int version;              // user_version after this migration: 1, 2, 3, ... in order
  const char* description;  // for error messages
  const char* sql;          // one or more statements
};

// benchlab's migrations, oldest first. Append only: a released migration never changes.
std::span<const Migration> Migrations();

// The version a database has once every migration in Migrations() is applied.
int LatestVersion();

// Reads PRAGMA user_version.
Result<int> UserVersion(sqlite3* db, const std::string& path);

// Applies every migration newer than the database's user_version, each in its own
// BEGIN IMMEDIATE transaction that also sets user_version, so a failure leaves the database at
// the last complete version and two processes opening a new file never both apply one.
// FailedPrecondition when the database is newer than the newest migration given.
Status Migrate(sqlite3* db, const std::string& path, std::span<const Migration> migrations);

}  // namespace benchlab::schema
