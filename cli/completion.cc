#include "cli/completion.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace benchlab {
namespace {

// One command of the tree: its words from the root ("", "run", "ca issue"), and what may follow.
struct Node {
  std::string path;
  const CLI::App* app = nullptr;
  std::vector<std::string> subcommands;
  std::vector<std::string> options;        // every spelling: "--db", "-o"
  std::vector<std::string> value_options;  // those that take a value: the next word is it
};

bool Listed(const CLI::App* app) { return !app->get_name().empty() && !app->get_group().empty(); }

void Collect(const CLI::App* app, const std::string& path, std::vector<Node>& out) {
  Node node;
  node.path = path;
  node.app = app;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (Listed(sub)) node.subcommands.push_back(sub->get_name());
  }
  for (const CLI::Option* opt : app->get_options()) {
    if (!opt->nonpositional() || opt->get_group().empty()) continue;  // positional or hidden
    std::vector<std::string> names;
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    for (const std::string& n : names) {
      node.options.push_back(n);
      if (opt->get_expected_max() > 0) node.value_options.push_back(n);  // not a flag
    }
  }
  out.push_back(node);
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (Listed(sub))
      Collect(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
  }
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// The first sentence of a description, at most 70 characters, for fish's one-line hints.
std::string Hint(const std::string& description) {
  std::string hint = description.substr(0, description.find_first_of(".:\n"));
  if (hint.size() > 70) hint = hint.substr(0, 67) + "...";
  return hint;
}

// A word inside single quotes: fish reads \' and \\ there.
std::string FishQuoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string BashScript(const std::vector<Node>& nodes) {
  std::ostringstream s;
  s << "# bash completion for benchlab, written by `benchlab completion bash` from the command's\n"
       "# own definitions (docs/cli.md, \"Completion\").\n"
       "_benchlab() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
       "  local path='' word i skip=0\n"
       "  # The command so far: its subcommands, skipping options and the values they take.\n"
       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
       "    word=${COMP_WORDS[i]}\n"
       "    if ((skip)); then skip=0; continue; fi\n"
       "    case \"$path|$word\" in\n";
  std::vector<std::string> takes_value, steps;
  for (const Node& n : nodes) {
    for (const std::string& o : n.value_options)
      takes_value.push_back("'" + n.path + "|" + o + "'");
    for (const std::string& sub : n.subcommands) steps.push_back("'" + n.path + "|" + sub + "'");
  }
  // One arm of a `case`: the patterns joined with '|', then `action`; none without patterns.
  auto arm = [&s](const char* indent, const std::vector<std::string>& patterns,
                  const char* action) {
    if (patterns.empty()) return;
    s << indent;
    for (size_t i = 0; i < patterns.size(); ++i) s << (i ? "|" : "") << patterns[i];
    s << ") " << action << " ;;\n";
  };
  arm("      ", takes_value, "skip=1; continue");
  s << "      *\\|-*) continue ;;\n";
  arm("      ", steps, "path=${path:+$path }$word");
  s << "    esac\n"
       "  done\n"
       "  # The value of an option: left to the shell's own completion (files).\n"
       "  case \"$path|$prev\" in\n";
  arm("    ", takes_value, "return");
  s << "  esac\n"
       "  local subcommands='' options=''\n"
       "  case \"$path\" in\n";
  for (const Node& n : nodes) {
    s << "    '" << n.path << "') subcommands='" << Join(n.subcommands) << "'; options='"
      << Join(n.options) << "' ;;\n";
  }
  s << "  esac\n"
       "  if [[ $cur == -* ]]; then\n"
       "    mapfile -t COMPREPLY < <(compgen -W \"$options\" -- \"$cur\")\n"
       "  elif [[ -n $subcommands ]]; then\n"
       "    mapfile -t COMPREPLY < <(compgen -W \"$subcommands\" -- \"$cur\")\n"
       "  fi\n"
       "}\n"
       "complete -o default -F _benchlab benchlab\n";
  return s.str();
}

std::string FishScript(const std::vector<Node>& nodes) {
  std::ostringstream s;
  s << "# fish completion for benchlab, written by `benchlab completion fish` from the command's\n"
       "# own definitions (docs/cli.md, \"Completion\").\n";
  for (const Node& n : nodes) {
    // Where this node's words complete: after its path and before any of its subcommands.
    std::string where;
    if (n.path.empty()) {
      where = "__fish_use_subcommand";
    } else {
      std::istringstream words(n.path);
      std::string w;
      while (words >> w)
        where += (where.empty() ? "" : "; and ") + ("__fish_seen_subcommand_from " + w);
    }
    if (!n.subcommands.empty() && !n.path.empty()) {
      where += "; and not __fish_seen_subcommand_from " + Join(n.subcommands);
    }
    for (const CLI::App* sub : n.app->get_subcommands([](const CLI::App*) { return true; })) {
      if (!Listed(sub)) continue;
      s << "complete -c benchlab -n " << FishQuoted(where) << " -a " << FishQuoted(sub->get_name())
        << " -d " << FishQuoted(Hint(sub->get_description())) << "\n";
    }
    for (const CLI::Option* opt : n.app->get_options()) {
      if (!opt->nonpositional() || opt->get_group().empty()) continue;
      s << "complete -c benchlab -n " << FishQuoted(where);
      for (const std::string& l : opt->get_lnames()) s << " -l " << l;
      for (const std::string& sn : opt->get_snames()) s << " -s " << sn;
      if (opt->get_expected_max() > 0) s << " -r";
      s << " -d " << FishQuoted(Hint(opt->get_description())) << "\n";
    }
  }
  return s.str();
}

}  // namespace

std::string CompletionScript(const CLI::App& root, std::string_view shell) {
  std::vector<Node> nodes;
  Collect(&root, "", nodes);
  if (shell == "fish") return FishScript(nodes);
  if (shell == "zsh") {
    // zsh runs bash's function through its bashcompinit.
    return "#compdef benchlab\n"
           "# zsh completion for benchlab, written by `benchlab completion zsh`: bash's, through\n"
           "# zsh's bashcompinit.\n"
           "autoload -U +X bashcompinit && bashcompinit\n" +
           BashScript(nodes);
  }
  return BashScript(nodes);
}

}  // namespace benchlab
