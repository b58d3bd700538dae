// A campaign's report from a coordinator, for the commands that only read reports (`benchlab
// report --coordinator`, `benchlab compare --coordinator`) and so need none of gRPC's headers.
#pragma once

#include <string>

#include "common/status.h"
#include "tls/files.h"

namespace benchlab {

// The report of `campaign` from the coordinator at `address` (GetReport; `format` md, json or
// csv), with a deadline long enough for a large campaign's samples to be read and summarised.
// InvalidArgument when the address is malformed; NotFound or InvalidArgument with the
// coordinator's words when it has no such campaign or format; Unavailable ("coordinator ADDRESS:
// ...") for any other failure of the call.
// Over mutual TLS when `tls` names files (cli/tls_options.h), else plaintext.
Result<std::string> FetchReport(const std::string& address, const std::string& campaign,
                                const std::string& format, const TlsFiles& tls = {});

}  // namespace benchlab
