// libFuzzer target: ParseAgentConfigText (agent/server/agent_config.h) on arbitrary text, as an
// agent's configuration file would bring it. A refusal must name the file ("agent.toml:LINE:
// ..."). An accepted configuration must survive WriteAgentConfig, which the embedded lab uses to
// hand its agents their catalogues: what it writes must load again (LoadAgentConfig), and writing
// that again must give the same text.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/server/agent_config.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/scratch_dir.h"

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Where the written configurations go, made once per process.
const std::string& ScratchDir() {
  static const std::string dir = benchlab::fuzz::MakeScratchDir("agent-config").string();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = benchlab::ParseAgentConfigText(text, "agent.toml", "/nonexistent/config-dir");
  if (!config.ok()) {
    const std::string& message = config.status().message();
    FUZZ_CHECK(message.starts_with("agent.toml"), "error without its file: " + message);
    return 0;
  }
  const std::string first = ScratchDir() + "/first.toml", second = ScratchDir() + "/second.toml";
  benchlab::Status written = benchlab::WriteAgentConfig(*config, first);
  FUZZ_CHECK(written.ok(), written.ToString());
  auto again = benchlab::LoadAgentConfig(first);
  FUZZ_CHECK(again.ok(), "the written configuration does not load: " + again.status().ToString() +
                             "\n--- written:\n" + ReadAll(first));
  written = benchlab::WriteAgentConfig(*again, second);
  FUZZ_CHECK(written.ok(), written.ToString());
  FUZZ_CHECK(ReadAll(first) == ReadAll(second),
             "written twice, the configuration changed:\n--- first:\n" + ReadAll(first) +
                 "\n--- second:\n" + ReadAll(second));
  return 0;
}
