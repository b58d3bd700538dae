// The store's connection: opening the database, its settings and the lab secret, and the
// statement core of store_sql.h. The SQL of each table family is in a file of its own (store.h).
// Every value reaches SQLite as a bound parameter; the only SQL text built at run time is column
// lists from kWindowColumns (store_windows.cc) and the WHERE clause shape of ListWindows.
#include "coordinator/store.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "coordinator/schema.h"
#include "coordinator/store_sql.h"

namespace benchlab {
namespace store_sql {

// Turns a failed SQLite call into a Status naming the database and the operation.
Status SqlError(sqlite3* db, int rc, const std::string& path, const std::string& what) {
  std::string message = path + ": " + what + ": " + sqlite3_errmsg(db);
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return Status::AlreadyExists(std::move(message));
      }
      return Status::InvalidArgument(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(message));
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::IoError(std::move(message));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::FailedPrecondition(std::move(message));
    default:
      return Status::Internal(std::move(message));
  }
}

// Runs a statement that returns no rows.
Status Run(sqlite3* db, Stmt& stmt, const std::string& path, const std::string& what) {
  int rc = stmt.Step();
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::Ok();
  return SqlError(db, rc, path, what);
}

}  // namespace store_sql

using store_sql::Collect;
using store_sql::Run;
using store_sql::SqlError;
using store_sql::Stmt;

namespace {

// The store's connection settings. Migrate checks the version before anything is written, so
// a newer database is refused untouched.
Status Configure(sqlite3* db, const std::string& path) {
  sqlite3_extended_result_codes(db, 1);
  // Another process (the coordinator, `benchlab windows --db`) may hold the write lock briefly.
  sqlite3_busy_timeout(db, 5000);
  BENCHLAB_RETURN_IF_ERROR(schema::Migrate(db, path, schema::Migrations()));

  // WAL lets readers work beside the writer; NORMAL durability is safe with WAL (a power cut can
  // lose the last commits, never corrupt); foreign keys are off in SQLite unless asked for.
  Stmt wal(db, "PRAGMA journal_mode = WAL");
  if (int rc = wal.Step(); rc != SQLITE_ROW) return SqlError(db, rc, path, "set WAL journal mode");
  const std::string mode = wal.Text(0);
  if (mode != "wal" && mode != "memory") {
    return Status::FailedPrecondition(path + ": cannot use WAL journal mode (got " + mode +
                                      "); the store needs WAL so readers never block writers");
  }
  for (const char* pragma : {"PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL"}) {
    Stmt stmt(db, pragma);
    BENCHLAB_RETURN_IF_ERROR(Run(db, stmt, path, pragma));
  }
  return Status::Ok();
}

// The missing directories leading to the database, each created 0700: the store is the lab's
// own state. What exists already is left as it is.
Status MakeDirectories(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path dir = fs::path(path).parent_path(); !dir.empty() && !fs::exists(dir, ec);
       dir = dir.parent_path()) {
    missing.push_back(dir);
    if (dir == dir.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::IoError(path + ": open database: create directory " + it->string() + ": " +
                             std::strerror(errno));
    }
  }
  return Status::Ok();
}

// Creates the database file 0600 unless it exists. SQLite gives the -wal and -shm files the
// mode of the database, so none of the three is ever readable by other users.
Status CreatePrivateFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    ::close(fd);
    return Status::Ok();
  }
  // An existing file (or a name SQLite will refuse with its own words) is opened as it is.
  if (errno == EEXIST || errno == EISDIR || errno == ELOOP) return Status::Ok();
  return Status::IoError(path + ": open database: " + std::strerror(errno));
}

constexpr const char* kLabSecretName = "lab_secret";

}  // namespace

Store::Store(sqlite3* db, std::string path, Clock& clock)
    : db_(db), path_(std::move(path)), clock_(clock) {}

Store::~Store() { sqlite3_close_v2(db_); }

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, Clock& clock) {
  if (path.empty()) return Status::InvalidArgument("open store: the database path is empty");
  if (path != ":memory:") {
    BENCHLAB_RETURN_IF_ERROR(MakeDirectories(path));
    BENCHLAB_RETURN_IF_ERROR(CreatePrivateFile(path));
  }
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  // The Store owns the handle from here, even a failed one, so it is always closed.
  std::unique_ptr<Store> store(new Store(db, path, clock));
  if (rc != SQLITE_OK) {
    if (db == nullptr) return Status::Internal(path + ": open database: out of memory");
    return SqlError(db, rc, path, "open database");
  }
  BENCHLAB_RETURN_IF_ERROR(Configure(db, path));
  BENCHLAB_RETURN_IF_ERROR(store->LoadLabSecret());
  return store;
}

Status Store::LoadLabSecret() {
  const std::string what = "read the lab secret";
  auto read = [&]() -> Result<std::vector<std::string>> {
    Stmt select(db_, "SELECT value FROM settings WHERE name = ?1");
    select.Bind(1, std::string(kLabSecretName));
    return Collect<std::string>(db_, select, path_, what, [](Stmt& st) { return st.Blob(0); });
  };
  BENCHLAB_ASSIGN_OR_RETURN(std::vector<std::string> secret, read());
  if (secret.empty()) {
    std::string bytes(kLabSecretBytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()),
                   static_cast<int>(bytes.size())) != 1) {
      return Status::Internal(path_ + ": make the lab secret: no random bytes");
    }
    // Another process opening a new file at the same moment may win; its secret is the one read.
    Stmt insert(db_, "INSERT OR IGNORE INTO settings (name, value) VALUES (?1, ?2)");
    insert.Bind(1, std::string(kLabSecretName));
    insert.BindBlob(2, bytes);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, "make the lab secret"));
    BENCHLAB_ASSIGN_OR_RETURN(secret, read());
  }
  if (secret.size() != 1 || secret[0].size() != kLabSecretBytes) {
    return Status::FailedPrecondition(path_ + ": settings." + kLabSecretName + ": expected " +
                                      std::to_string(kLabSecretBytes) + " bytes");
  }
  lab_secret_ = std::move(secret[0]);
  return Status::Ok();
}

int Store::SchemaVersion() {
  std::lock_guard lock(mu_);
  Result<int> version = schema::UserVersion(db_, path_);
  return version.ok() ? *version : -1;
}

}  // namespace benchlab
