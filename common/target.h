// TargetDef: one target as a campaign file or an agent's catalogue defines it: the command an
// agent may start (argv, no shell), its port, readiness path, pinning and environment. Both the
// coordinator (campaign files) and the agent (its own catalogue) parse it; only an agent runs it.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/build_recipe.h"

namespace benchlab {

struct TargetDef {
  std::string name;                  // [a-z0-9-]+, unique in the campaign
  std::vector<std::string> command;  // argv, no shell; may hold {port}, {campaign_dir}, {run_dir}
                                     // and, with tls, {tls_cert}, {tls_key}, {tls_ca}; with a
                                     // build recipe, {out} (the build's output directory)
  std::string port = "auto";         // "auto" or a decimal port number
  std::string ready = "/";           // GET until 2xx
  std::vector<int> cpus;             // CPUs the target is pinned to; empty: not pinned
  std::string cwd;                   // empty: the run directory
  std::map<std::string, std::string> env;  // the only environment the target gets (plus PORT)
  std::vector<std::string> templates;      // files rendered into {run_dir} (placeholders filled)
  std::chrono::milliseconds ready_timeout{10000};
  std::vector<std::string> version;  // argv printing the target's version on its first line
  // It serves HTTPS: the agent makes a CA, a certificate and its key in the run directory before
  // the templates are rendered, and probes readiness over TLS (docs/security.md).
  bool tls = false;
  // Side services it needs (common/service.h), by name: started before it on the same agent;
  // {service.NAME.port}, {service.NAME.host} and {service.NAME.run_dir} in its command, cwd and
  // env values are filled from them.
  std::vector<std::string> services;
  // How the agent builds a commit of the target's source (docs/agent.md, "Builds"): `source`,
  // `build` and `build_timeout`; empty (no steps) when the target has none.
  BuildRecipe recipe;
  // A campaign's target only (never an agent's catalogue): the revision of the catalogue
  // target's source the agent builds and runs (StartTargetRequest.commit), empty for its
  // catalogue command as it stands; and the catalogue target it runs, empty for `name`.
  std::string commit;
  std::string of;
  std::string campaign_dir;  // fills {campaign_dir}: the directory of the file that defined it
  int line = 0;              // where [[target]] starts in its file
};

}  // namespace benchlab
