// What the commands that read a database or write a result share: opening a database that must
// exist (`history`, `regressions`, `audit`, ...), and writing the result to stdout or a file.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "coordinator/store.h"

namespace benchlab {

// The store at `db`, for reading, in `out`: 0, or one line "benchlab COMMAND: ..." and the exit
// status. A missing file is refused (2, "--db: no database at DB"), never created; a file that
// cannot be opened as a database is a failure (1).
int OpenExistingStore(const char* command, const std::string& db, std::unique_ptr<Store>& out);

// `text` to stdout ("" or "-"), or to `output` through a file beside it renamed over it, so that
// a reader never sees half of it. Returns 0, or prints one line "benchlab COMMAND: ..." and
// returns the exit status (cli/commands.h: 1 failure, 2 bad input).
int WriteCommandOutput(const char* command, const std::string& text, const std::string& output);

}  // namespace benchlab
