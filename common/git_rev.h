// Git revisions named from outside benchlab (a command line, a request): their text checked
// before git sees it, resolved to commit ids, and the first-parent range between two commits.
// git runs by argv (common/subprocess.h), never through a shell, with stdin from /dev/null, an
// environment of PATH and GIT_CONFIG_NOSYSTEM=1 only (no HOME, so no user configuration), and a
// time limit of kGitTimeLimit per command. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/subprocess.h"

namespace benchlab {

inline constexpr std::chrono::milliseconds kGitTimeLimit{10'000};
inline constexpr size_t kMaxRevisionBytes = 200;

// The most commits a bisection's range may hold (docs/security.md, "Builds"), and the most bytes
// of a commit's subject that leave an agent (ListCommits).
inline constexpr size_t kMaxRangeCommits = 4096;
inline constexpr size_t kMaxCommitSubjectBytes = 256;

// Whether `text` is a full commit id as git prints it: 40 lowercase hex digits.
bool IsFullObjectId(std::string_view text);

// A commit's subject as it leaves an agent (ListCommits): its line ends cut, escaped as
// PrintableText escapes it (common/printable.h), then cut between UTF-8 characters to at most
// kMaxCommitSubjectBytes bytes. IsListedSubject holds for what it returns.
std::string ListedSubject(std::string_view subject);

// Whether `subject` could have come from ListedSubject: printable UTF-8 as it stands
// (FirstUnprintable finds nothing; a backslash is the start of an escape, so allowed) and at
// most kMaxCommitSubjectBytes bytes. The coordinator checks an agent's reply with it.
bool IsListedSubject(std::string_view subject);

// The most digits of one ancestry suffix ("~999999").
inline constexpr size_t kMaxAncestryDigits = 6;

// Accepts a hex object id of 7 to 40 digits, or a ref name as `git check-ref-format
// --allow-onelevel` takes it (no "..", no control characters, space or any of ~^:?*[\, no
// leading '-', no "@{", not "@", no component starting with '.' or ending with ".lock", no
// "//", not ending with '/' or '.'), either followed by ancestry suffixes, each '~' or '^' with
// at most kMaxAncestryDigits digits ("main~3", "v1.2^2", "abc1234^"); the whole of at most
// kMaxRevisionBytes bytes. InvalidArgument naming the text (escaped, common/printable.h) and
// what is wrong with it.
Status CheckRevisionText(std::string_view rev);

// The 40-hex id of the commit `rev` names in the repository (a work tree) at `repo`:
// `git -C repo rev-parse --verify --quiet --end-of-options REV^{commit}`. rev is checked with
// CheckRevisionText first. NotFound when it names no commit there.
Result<std::string> ResolveCommit(const std::string& repo, std::string_view rev);

struct Commit {
  std::string oid;      // 40 hex digits
  std::string subject;  // the first line of its message, as stored
};

// The commits after `good_oid` up to and including `bad_oid`, oldest first, following first
// parents only (a merged branch's own commits are not in it). Both are resolved as commits.
// FailedPrecondition when good is not an ancestor of bad; ResourceExhausted when the range holds
// more than max_commits ("the range holds N commits, over the limit of M").
Result<std::vector<Commit>> FirstParentRange(const std::string& repo, std::string_view good_oid,
                                             std::string_view bad_oid, size_t max_commits);

// Runs `git -C repo ARGS...` under the rules above, with `limit` as its time limit; an error
// when git could not start or ran past the limit, else how it ended with its output.
Result<RunOutcome> RunGit(const std::string& repo, const std::vector<std::string>& args,
                          std::chrono::milliseconds limit = kGitTimeLimit,
                          size_t max_output = 1 << 20);

}  // namespace benchlab
