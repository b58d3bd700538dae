#include "common/git_rev.h"

#include <cstdlib>

#include "common/printable.h"
#include "common/subprocess.h"

namespace benchlab {
namespace {

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool IsObjectId(std::string_view text) {
  if (text.size() < 7 || text.size() > 40) return false;
  for (char c : text) {
    if (!IsHexDigit(c)) return false;
  }
  return true;
}

std::string RevisionRefusal(std::string_view rev, std::string_view why) {
  return "revision \"" + PrintableText(rev) + "\" " + std::string(why) +
         ": expected a commit id of 7 to 40 hex digits or a branch or tag name, optionally "
         "followed by ~N or ^N";
}

// Why `rev` is not a ref name git would take (check-ref-format --allow-onelevel); empty when it
// is one.
std::string RefNameProblem(std::string_view rev) {
  if (rev.empty()) return "is empty";
  if (rev.size() > kMaxRevisionBytes) {
    return "is " + std::to_string(rev.size()) + " bytes long, over the limit of " +
           std::to_string(kMaxRevisionBytes);
  }
  for (char c : rev) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return "holds a control character";
    if (c == ' ') return "holds a space";
    if (std::string_view("~^:?*[\\").find(c) != std::string_view::npos) {
      return std::string("holds '") + c + "'";
    }
  }
  if (rev.front() == '-') return "starts with '-'";
  if (rev == "@") return "is \"@\"";
  if (rev.find("..") != std::string_view::npos) return "holds \"..\"";
  if (rev.find("@{") != std::string_view::npos) return "holds \"@{\"";
  if (rev.find("//") != std::string_view::npos) return "holds \"//\"";
  if (rev.front() == '/' || rev.back() == '/') return "starts or ends with '/'";
  if (rev.back() == '.') return "ends with '.'";
  size_t start = 0;
  while (start <= rev.size()) {
    size_t slash = rev.find('/', start);
    if (slash == std::string_view::npos) slash = rev.size();
    std::string_view part = rev.substr(start, slash - start);
    if (part.starts_with('.')) return "has a part starting with '.'";
    if (part.ends_with(".lock")) return "has a part ending with \".lock\"";
    start = slash + 1;
  }
  return "";
}

// git's environment: PATH only for finding it, no system or user configuration (no HOME), no
// prompts on a terminal.
std::map<std::string, std::string> GitEnvironment() {
  const char* path = std::getenv("PATH");
  return {{"PATH", path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"},
          {"GIT_CONFIG_NOSYSTEM", "1"},
          {"GIT_TERMINAL_PROMPT", "0"},
          {"LANG", "C"}};
}

std::string FirstLineOf(const std::string& text) {
  size_t nl = text.find('\n');
  return PrintableText(Truncated(text.substr(0, nl), 300));
}

}  // namespace

Result<RunOutcome> RunGit(const std::string& repo, const std::vector<std::string>& args,
                          std::chrono::milliseconds limit, size_t max_output) {
  RunSpec spec;
  spec.argv = {"git", "-C", repo};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = GitEnvironment();
  spec.time_limit = limit;
  spec.max_output = max_output;
  auto outcome = RunArgv(spec);
  if (!outcome.ok()) return Status(outcome.status().code(), "git: " + outcome.status().message());
  if (outcome->timed_out) {
    return Status::DeadlineExceeded("git " + (args.empty() ? std::string() : args.front()) +
                                    " in " + PrintableText(repo) + " " + outcome->Describe(limit));
  }
  return outcome;
}

Status CheckRevisionText(std::string_view rev) {
  // Ancestry suffixes ("~3", "^", "^2") are taken off the end; what is left is judged alone.
  std::string_view base = rev;
  if (rev.size() <= kMaxRevisionBytes) {
    while (!base.empty()) {
      size_t digits = 0;
      while (digits < base.size() && base[base.size() - 1 - digits] >= '0' &&
             base[base.size() - 1 - digits] <= '9') {
        ++digits;
      }
      if (digits == base.size() || digits > kMaxAncestryDigits) break;
      const char mark = base[base.size() - 1 - digits];
      if (mark != '~' && mark != '^') break;
      base.remove_suffix(digits + 1);
    }
  }
  if (base.size() < rev.size() && base.empty()) {
    return Status::InvalidArgument(RevisionRefusal(rev, "has no commit before its '~' or '^'"));
  }
  if (IsObjectId(base)) return Status::Ok();
  std::string problem = RefNameProblem(base);
  if (problem.empty()) return Status::Ok();
  return Status::InvalidArgument(RevisionRefusal(rev.substr(0, 2 * kMaxRevisionBytes), problem));
}

Result<std::string> ResolveCommit(const std::string& repo, std::string_view rev) {
  BENCHLAB_RETURN_IF_ERROR(CheckRevisionText(rev));
  BENCHLAB_ASSIGN_OR_RETURN(RunOutcome outcome,
                            RunGit(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options",
                                          std::string(rev) + "^{commit}"}));
  std::string out = outcome.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (outcome.exit_code == 1 && out.empty()) {
    return Status::NotFound("revision \"" + PrintableText(rev) + "\" names no commit in " +
                            PrintableText(repo));
  }
  if (!outcome.ok()) {
    return Status::FailedPrecondition("git rev-parse " + PrintableText(rev) + " in " +
                                      PrintableText(repo) + ": " + outcome.Describe(kGitTimeLimit) +
                                      ": " + FirstLineOf(out));
  }
  if (out.size() != 40 || !IsObjectId(out)) {
    return Status::Internal("git rev-parse " + PrintableText(rev) + " answered \"" +
                            FirstLineOf(out) + "\", not a commit id");
  }
  return out;
}

Result<std::vector<Commit>> FirstParentRange(const std::string& repo, std::string_view good_oid,
                                             std::string_view bad_oid, size_t max_commits) {
  BENCHLAB_ASSIGN_OR_RETURN(const std::string good, ResolveCommit(repo, good_oid));
  BENCHLAB_ASSIGN_OR_RETURN(const std::string bad, ResolveCommit(repo, bad_oid));
  BENCHLAB_ASSIGN_OR_RETURN(RunOutcome ancestry, RunGit(repo, {"merge-base", "--is-ancestor",
                                                               "--end-of-options", good, bad}));
  if (ancestry.exit_code == 1) {
    return Status::FailedPrecondition("good commit " + good + " is not an ancestor of bad commit " +
                                      bad + " in " + PrintableText(repo));
  }
  if (!ancestry.ok()) {
    return Status::FailedPrecondition("git merge-base --is-ancestor in " + PrintableText(repo) +
                                      ": " + ancestry.Describe(kGitTimeLimit) + ": " +
                                      FirstLineOf(ancestry.output));
  }
  // Counted first, so that a huge range is refused without reading its subjects.
  BENCHLAB_ASSIGN_OR_RETURN(
      RunOutcome count, RunGit(repo, {"rev-list", "--first-parent", "--count", "--end-of-options",
                                      good + ".." + bad}));
  char* end = nullptr;
  const unsigned long long n = std::strtoull(count.output.c_str(), &end, 10);
  if (!count.ok() || end == count.output.c_str()) {
    return Status::FailedPrecondition("git rev-list --count in " + PrintableText(repo) + ": " +
                                      count.Describe(kGitTimeLimit) + ": " +
                                      FirstLineOf(count.output));
  }
  if (n > max_commits) {
    return Status::ResourceExhausted("the range " + good.substr(0, 12) + ".." + bad.substr(0, 12) +
                                     " holds " + std::to_string(n) +
                                     " commits, over the limit of " + std::to_string(max_commits));
  }
  // Subjects are one line each; 1 KiB apiece is far more than any needs.
  BENCHLAB_ASSIGN_OR_RETURN(RunOutcome log,
                            RunGit(repo,
                                   {"log", "--first-parent", "--reverse", "--no-color",
                                    "--format=%H%x00%s", "--end-of-options", good + ".." + bad},
                                   kGitTimeLimit, (max_commits + 1) * 1024 + 64 * 1024));
  if (!log.ok()) {
    return Status::FailedPrecondition("git log in " + PrintableText(repo) + ": " +
                                      log.Describe(kGitTimeLimit) + ": " + FirstLineOf(log.output));
  }
  std::vector<Commit> commits;
  size_t start = 0;
  const std::string& text = log.output;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + start, nl - start);
    start = nl + 1;
    if (line.empty()) continue;
    size_t nul = line.find('\0');
    if (nul != 40 || !IsObjectId(line.substr(0, 40))) {
      return Status::Internal("git log in " + PrintableText(repo) + " printed \"" +
                              PrintableText(Truncated(line, 100)) + "\", not an id and subject");
    }
    commits.push_back(Commit{std::string(line.substr(0, 40)), std::string(line.substr(41))});
  }
  if (commits.size() != n) {
    return Status::Internal("git log listed " + std::to_string(commits.size()) +
                            " commits where rev-list counted " + std::to_string(n));
  }
  // Each commit of the range is judged against the one before it, so the oldest must sit on
  // good itself: a good commit reached only through a merge's other parent is refused.
  if (!commits.empty()) {
    BENCHLAB_ASSIGN_OR_RETURN(RunOutcome parent,
                              RunGit(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options",
                                            commits.front().oid + "^1"}));
    const std::string first_parent = FirstLineOf(parent.output);
    if (!parent.ok() || first_parent != good) {
      return Status::FailedPrecondition("good commit " + good + " is not on bad commit " + bad +
                                        "'s first-parent line in " + PrintableText(repo) +
                                        " (it is reached through a merge); " +
                                        "give a good commit of that line");
    }
  }
  return commits;
}

bool IsFullObjectId(std::string_view text) { return text.size() == 40 && IsObjectId(text); }

std::string ListedSubject(std::string_view subject) {
  while (!subject.empty() && (subject.back() == '\n' || subject.back() == '\r')) {
    subject.remove_suffix(1);
  }
  std::string out = PrintableText(subject);
  if (out.size() > kMaxCommitSubjectBytes) {
    // PrintableText's output is well-formed UTF-8, so a character's first byte is at most three
    // continuation bytes back.
    size_t cut = kMaxCommitSubjectBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

bool IsListedSubject(std::string_view subject) {
  return subject.size() <= kMaxCommitSubjectBytes &&
         FirstUnprintable(subject) == std::string_view::npos;
}

}  // namespace benchlab
